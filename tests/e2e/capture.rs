use base64::Engine as _;
use serde_json::json;

use crate::support::{Site, Tabwire, sha256_hex};

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(&[0x89, b'P', b'N', b'G']), "not a PNG");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[tokio::test]
async fn screenshots_are_image_content_with_their_real_dimensions() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("screenshot").await;
    tw.ok("open_url", json!({ "url": site.url("fold.html") }))
        .await;

    let reply = tw
        .call(
            "capture_page_screenshot",
            json!({ "save_path": "shots/view.png" }),
        )
        .await;
    assert_eq!(
        reply.images.len(),
        1,
        "screenshot must be MCP image content"
    );
    assert_eq!(reply.images[0].1, "image/png");
    assert!(
        !reply
            .envelope
            .to_string()
            .contains(&reply.images[0].0[..100]),
        "base64 leaked into the text"
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&reply.images[0].0)
        .unwrap();
    let data = reply.ok();
    let (width, height) = png_size(&bytes);
    assert_eq!(
        (
            data["image_width"].as_u64().unwrap(),
            data["image_height"].as_u64().unwrap()
        ),
        (width as u64, height as u64)
    );
    assert_eq!(data["pixel_space"], "device");
    let saved = std::fs::read(tw.output_dir.join("shots/view.png")).expect("saved copy");
    assert_eq!(saved, bytes);
    assert_eq!(data["sha256"], sha256_hex(&bytes));

    let full = tw
        .call("capture_page_screenshot", json!({ "full_page": true }))
        .await;
    let full_bytes = base64::engine::general_purpose::STANDARD
        .decode(&full.images[0].0)
        .unwrap();
    let (_, full_height) = png_size(&full_bytes);
    assert!(
        full_height > 3000,
        "full page should cover the 3000px spacer, got {full_height}"
    );

    let jpeg = tw.call("capture_page_screenshot", json!({ "format": "jpeg", "quality": 40, "clip": { "x": 0, "y": 0, "width": 100, "height": 50 } })).await;
    assert_eq!(jpeg.images[0].1, "image/jpeg");
    let data = jpeg.ok();
    assert_eq!(data["image_width"], 100);
    assert_eq!(data["image_height"], 50);
}

#[tokio::test]
async fn save_pdf_writes_a_valid_pdf_inside_the_output_dir_only() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("pdf").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let data = tw
        .ok(
            "save_pdf",
            json!({ "save_path": "docs/form.pdf", "landscape": true }),
        )
        .await;
    let bytes = std::fs::read(tw.output_dir.join("docs/form.pdf")).expect("pdf written");
    assert!(bytes.starts_with(b"%PDF-"));
    assert_eq!(data["bytes"], bytes.len());
    assert_eq!(data["sha256"], sha256_hex(&bytes));
    // BrowserTap's names for the same facts.
    assert_eq!(data["status"], "success");
    assert_eq!(data["format"], "pdf");
    assert_eq!(data["size"], bytes.len());
    assert_eq!(data["saved_to"], data["path"]);
    let leftovers: Vec<_> = std::fs::read_dir(tw.output_dir.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "temporary files left behind: {leftovers:?}"
    );

    for bad in ["/tmp/x.pdf", "../x.pdf", "docs/../../x.pdf"] {
        let reply = tw.call("save_pdf", json!({ "save_path": bad })).await;
        assert_eq!(reply.reason(), "path_outside_output_dir", "{bad}");
    }
    assert!(!tw.work.join("x.pdf").exists());
    let bad_scale = tw
        .call("save_pdf", json!({ "save_path": "a.pdf", "scale": 3 }))
        .await;
    assert_eq!(bad_scale.error_code(), "invalid_request");
}
