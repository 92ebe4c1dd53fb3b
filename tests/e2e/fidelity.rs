//! Snapshot fidelity against Chromium's own accessibility tree.
//!
//! For every page of `tests/pages/corpus`, Chromium's `Accessibility.getFullAXTree` (each
//! frame, out-of-process ones through their own target) lists the interactive controls
//! with a name. `scan_page` must list each with the same role and name, and its locator,
//! passed unchanged to `page_click`, must put the click on that very element: the page
//! logs every click's composed path and the test asks Chromium, about the AX node's own
//! DOM node, whether it was on the path.
//!
//! Two snapshots are checked. The complete one (`cutlist: false`, no target or character
//! cap) must have recall 100%. The default one (what an agent gets from `scan_page {}`)
//! collapses long runs of similar items and stops at its caps; read on through every
//! `continuation.cursor` it names (past the caps, then into the items its cut list
//! collapsed), it must have recall 100% too: nothing is out of reach.
//!
//! Figures are printed and written to `target/fidelity-report.json`, which
//! `cargo run -p bench --release -- peers` copies into `docs/benchmarks.md`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};
use tokio_tungstenite::tungstenite::Message;

use crate::support::{DebuggingBrowser, PATIENCE, Site, Tabwire};

/// The corpus, in the order reported.
const PAGES: &[&str] = &[
    "forms.html",
    "tables.html",
    "menus.html",
    "dialogs.html",
    "modal.html",
    "shadow.html",
    "frames.html",
    "widgets.html",
    "names.html",
    "dates.html",
    "long-list.html",
];

/// The environment variable naming a folder of more pages to check: real pages nobody
/// here wrote, served with the click-logging harness appended. `scripts/test.sh` fetches
/// six Debian documentation pages into `target/fidelity-extra` and sets it (best effort:
/// without a package mirror the check runs on the corpus alone, and says so).
const EXTRA_PAGES: &str = "TABWIRE_FIDELITY_EXTRA";

/// Each page's name and the path the site serves it at: the corpus, then any extra pages.
fn pages() -> Vec<(String, String)> {
    let mut pages: Vec<(String, String)> = PAGES
        .iter()
        .map(|name| ((*name).to_owned(), format!("corpus/{name}")))
        .collect();
    if let Some(dir) = std::env::var_os(EXTRA_PAGES) {
        // A relative folder is the workspace's (the test runs in the crate's folder).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(dir);
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".html"))
            .collect();
        names.sort();
        pages.extend(names.into_iter().map(|n| (n.clone(), format!("extra/{n}"))));
    }
    pages
}

/// Chromium roles counted as interactive controls.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// The whole snapshot: nothing collapsed, the largest caps the tool takes (200 targets
/// per reply; a page or frame with more is read on through its cursor).
fn complete() -> Value {
    json!({ "cutlist": false, "max_targets": 200, "maxchars": 2_000_000 })
}

#[tokio::test]
async fn scan_page_has_every_named_control_of_chromiums_accessibility_tree() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("fidelity-browser").await;
    let tw = Tabwire::stdio_with("fidelity", &["--cdp-endpoint", &browser.http]).await;
    let cdp = Cdp::connect(&browser.ws).await;

    let mut report = Vec::new();
    for (name, path) in pages() {
        let url = site.url(&path);
        tw.ok("open_url", json!({ "url": url })).await;
        report.push(check_page(&tw, &cdp, &name, &url).await);
    }

    let total = Figures::sum(report.iter().map(|p| &p.complete));
    let total_default = Figures::sum(report.iter().map(|p| &p.default));
    println!(
        "\nsnapshot fidelity against Chromium's accessibility tree (corpus: tests/pages/corpus)"
    );
    println!(
        "{:<16} {:>8} {:>8} {:>9} {:>10}   {:>9} {:>10} {:>10} {:>8}",
        "page",
        "controls",
        "matched",
        "recall",
        "precision",
        "default",
        "recall",
        "collapsed",
        "via cursor"
    );
    for page in &report {
        println!("{}", page.line());
    }
    println!(
        "{}",
        PageReport {
            page: "total".into(),
            complete: total.clone(),
            default: total_default.clone(),
            dropdown_options: report.iter().map(|p| p.dropdown_options).sum(),
            dropdown_shown: report.iter().map(|p| p.dropdown_shown).sum(),
            notes: Vec::new(),
        }
        .line()
    );
    for page in &report {
        for note in &page.notes {
            println!("  {}: {note}", page.page);
        }
    }
    let beyond = beyond_the_corpus(&tw, &cdp, &site).await;
    write_report(&report, &total, &total_default, &beyond);

    let missing = missing_in(&report, |p| &p.complete);
    assert!(
        missing.is_empty(),
        "controls in Chromium's accessibility tree that scan_page lacks or cannot act on:\n{}",
        missing.join("\n")
    );
    let silent = missing_in(&report, |p| &p.default);
    assert!(
        silent.is_empty(),
        "controls the default snapshot, read on through its cursors, never lists:\n{}",
        silent.join("\n")
    );
    let dropdown_options: usize = report.iter().map(|p| p.dropdown_options).sum();
    let dropdown_shown: usize = report.iter().map(|p| p.dropdown_shown).sum();
    assert_eq!(
        dropdown_shown, dropdown_options,
        "drop-down options missing from their select's content"
    );
}

/// The chrome face's outline (`chrome_read_page`, the whole page) against the same
/// tree: every named control must be on a line with its role and name, and its ref, given
/// to `chrome_click_element`, must put the click on that very element, frames included.
#[tokio::test]
async fn read_page_has_every_named_control_of_chromiums_accessibility_tree() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("fidelity-chrome-browser").await;
    let tw = Tabwire::stdio_with(
        "fidelity-chrome",
        &["--cdp-endpoint", &browser.http, "--face", "btap,chrome"],
    )
    .await;
    let cdp = Cdp::connect(&browser.ws).await;
    let (mut controls_total, mut matched_total, mut chars_total) = (0, 0, 0);
    let mut missing = Vec::new();
    println!("\nchrome_read_page fidelity against Chromium's accessibility tree");
    println!(
        "{:<16} {:>8} {:>8} {:>9} {:>8}",
        "page", "controls", "matched", "recall", "chars"
    );
    for (name, path) in pages() {
        let url = site.url(&path);
        tw.ok("open_url", json!({ "url": url })).await;
        let frames = chromium_frames(&cdp, &url).await;
        // The whole outline: every reply the continuation cursor reaches.
        let mut outline = String::new();
        let mut args = json!({ "viewportOnly": false });
        loop {
            let read = tw.chrome_ok("chrome_read_page", args.clone()).await;
            outline.push_str(read["pageContent"].as_str().unwrap_or_default());
            match read["continuation"]["cursor"].as_str() {
                Some(cursor) => args["cursor"] = json!(cursor),
                None => break,
            }
        }
        let targets = outline_targets(&outline);
        let mut used = vec![false; targets.len()];
        let (mut controls, mut matched) = (0, 0);
        for frame in &frames {
            for control in frame.controls.iter() {
                if control.dropdown_option {
                    if !outline.contains(&control.name) {
                        missing.push(format!(
                            "{name}: drop-down option {:?} not in its select's line",
                            control.name
                        ));
                    }
                    continue;
                }
                controls += 1;
                match act_through(&tw, &cdp, frame, control, &targets, &mut used, Face::Chrome)
                    .await
                {
                    Ok(()) => matched += 1,
                    Err(why) => missing.push(format!(
                        "{name}: {} {:?} ({}): {why}",
                        control.role, control.name, frame.url
                    )),
                }
            }
        }
        println!(
            "{:<16} {controls:>8} {matched:>8} {:>8.1}% {:>8}",
            name.trim_end_matches(".html"),
            ratio(matched, controls) * 100.0,
            outline.chars().count()
        );
        controls_total += controls;
        matched_total += matched;
        chars_total += outline.chars().count();
    }
    println!(
        "{:<16} {controls_total:>8} {matched_total:>8} {:>8.1}% {chars_total:>8}",
        "total",
        ratio(matched_total, controls_total) * 100.0
    );
    assert!(
        missing.is_empty(),
        "controls in Chromium's accessibility tree that chrome_read_page lacks or cannot act on:\n{}",
        missing.join("\n")
    );
}

/// Both faces' lean replies (`--replies lean`) against the same tree: `scan_page {}` and
/// `chrome_read_page {viewportOnly: false}`, each followed through every cursor it names,
/// must list every named control on a line with its role and name, and that line's ref
/// (`e12`), given to `page_click` or `chrome_click_element`, must put the click on that
/// very element, frames included.
#[tokio::test]
async fn lean_outlines_have_every_named_control_of_chromiums_accessibility_tree() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("fidelity-lean-browser").await;
    let tw = Tabwire::stdio_with(
        "fidelity-lean",
        &[
            "--cdp-endpoint",
            &browser.http,
            "--face",
            "btap,chrome",
            "--replies",
            "lean",
        ],
    )
    .await;
    let cdp = Cdp::connect(&browser.ws).await;
    let mut missing = Vec::new();
    println!(
        "\nlean replies' fidelity against Chromium's accessibility tree (every cursor followed)"
    );
    println!(
        "{:<16} {:>8} {:>8} {:>8} {:>10} {:>8} {:>10}",
        "page", "controls", "scan", "chars", "read_page", "chars", ""
    );
    let (mut controls_total, mut matched) = (0, [0usize; 2]);
    for (name, path) in pages() {
        let url = site.url(&path);
        let opened = tw.text("open_url", json!({ "url": url })).await;
        assert!(!opened.is_error, "{}", opened.text);
        let frames = chromium_frames(&cdp, &url).await;
        let mut row = format!("{:<16}", name.trim_end_matches(".html"));
        let mut controls = 0;
        for (which, (tool, args, face)) in [
            ("scan_page", json!({}), Face::BtapLean),
            (
                "chrome_read_page",
                json!({ "viewportOnly": false }),
                Face::ChromeLean,
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let (outline, chars) = tw.read_all(tool, args).await;
            let targets = lean_targets(&outline);
            let mut used = vec![false; targets.len()];
            let (mut count, mut found) = (0, 0);
            for frame in &frames {
                for control in frame.controls.iter() {
                    if control.dropdown_option {
                        if !outline.contains(&control.name) {
                            missing.push(format!(
                                "{name} ({tool}): drop-down option {:?} not in its select's line",
                                control.name
                            ));
                        }
                        continue;
                    }
                    count += 1;
                    match act_through(&tw, &cdp, frame, control, &targets, &mut used, face).await {
                        Ok(()) => found += 1,
                        Err(why) => missing.push(format!(
                            "{name} ({tool}): {} {:?} ({}): {why}",
                            control.role, control.name, frame.url
                        )),
                    }
                }
            }
            if which == 0 {
                row.push_str(&format!(" {count:>8}"));
                controls = count;
            }
            row.push_str(&format!(" {found:>8} {chars:>8}"));
            matched[which] += found;
        }
        controls_total += controls;
        println!("{row}");
    }
    println!(
        "{:<16} {controls_total:>8} {:>8} {:>8} {:>10}",
        "total", matched[0], "", matched[1]
    );
    assert!(
        missing.is_empty(),
        "controls in Chromium's accessibility tree that a lean reply lacks or cannot act on:\n{}",
        missing.join("\n")
    );
}

/// The controls of a lean outline: `role "name" state… e12` lines (one space a level),
/// and the sub-field lines (`spinbutton "Day"`, no ref) right below a date or time
/// input's line.
fn lean_targets(outline: &str) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    let mut host: Option<(usize, Target)> = None;
    for raw in outline.lines() {
        let indent = raw.len() - raw.trim_start().len();
        let line = raw.trim_start();
        let reference = line.rsplit_once(' ').map(|(_, last)| last).filter(|last| {
            last.len() > 1 && last.starts_with('e') && last[1..].chars().all(|c| c.is_ascii_digit())
        });
        let Some(reference) = reference else {
            if let Some((host_indent, input)) = &host
                && indent > *host_indent
                && let Some(kind) = &input.field_of
            {
                let (role, name) = role_and_name(line);
                targets.push(Target {
                    role,
                    name,
                    field_of: Some(kind.clone()),
                    ..input.clone()
                });
            } else {
                host = None;
            }
            continue;
        };
        let head = &line[..line.len() - reference.len() - 1];
        let (role, name) = role_and_name(head);
        let target = Target {
            role,
            name,
            locator: json!({ "ref": reference }),
            disabled: head.contains(" disabled"),
            continued: false,
            field_of: None,
        };
        let kind = head
            .split_whitespace()
            .find_map(|word| word.strip_prefix("type="))
            .map(str::to_owned);
        host = Some((
            indent,
            Target {
                field_of: kind,
                ..target.clone()
            },
        ));
        targets.push(target);
    }
    targets
}

/// The controls of an outline: `- role "name" [ref=ref_N]` lines, and the sub-field
/// lines (`- spinbutton "Day"`, no ref) right below a date or time input's line.
fn outline_targets(outline: &str) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    // The last control line: its indentation, and the target it made.
    let mut host: Option<(usize, Target)> = None;
    for raw in outline.lines() {
        let indent = raw.len() - raw.trim_start().len();
        let Some(line) = raw.trim_start().strip_prefix("- ") else {
            continue;
        };
        let Some(at) = ref_position(line) else {
            if let Some((host_indent, input)) = &host
                && indent > *host_indent
                && let Some(kind) = &input.field_of
            {
                let (role, name) = role_and_name(line);
                targets.push(Target {
                    role,
                    name,
                    field_of: Some(kind.clone()),
                    ..input.clone()
                });
            } else {
                host = None;
            }
            continue;
        };
        let reference = line[at + 6..].split(']').next().unwrap_or_default();
        let (role, name) = role_and_name(&line[..at]);
        let target = Target {
            role,
            name,
            locator: json!({ "ref": reference }),
            disabled: line.contains(" disabled"),
            continued: false,
            field_of: None,
        };
        // A date or time input says its type (`type=date`); its sub-fields follow.
        let kind = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix("type="))
            .map(str::to_owned);
        host = Some((
            indent,
            Target {
                field_of: kind,
                ..target.clone()
            },
        ));
        targets.push(target);
    }
    targets
}

/// `role "name"` as an outline line writes it.
fn role_and_name(head: &str) -> (String, String) {
    let Some((role, rest)) = head.split_once(' ') else {
        return (head.to_owned(), String::new());
    };
    // Without a quoted name, what follows the role is its state (`readonly`, `checked`).
    let name = if rest.trim_start().starts_with('"') {
        unquote(rest.trim())
    } else {
        String::new()
    };
    (role.to_owned(), name)
}

/// Where a control line's ` [ref=` starts: after its quoted name, which may itself hold
/// that text.
fn ref_position(line: &str) -> Option<usize> {
    let role_end = line.find(' ')?;
    let mut from = role_end;
    if line[role_end + 1..].starts_with('"') {
        let name_start = role_end + 2;
        let mut escaped = false;
        for (at, c) in line[name_start..].char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    from = name_start + at + 1;
                    break;
                }
                _ => {}
            }
        }
    }
    line[from..].find(" [ref=").map(|at| from + at)
}

/// The name inside the outline's quotes: the first `"` opens it and the next unescaped
/// `"` closes it; `\"` and `\\` inside stand for `"` and `\`.
fn unquote(quoted: &str) -> String {
    let mut name = String::new();
    let mut chars = quoted.strip_prefix('"').unwrap_or(quoted).chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.extend(chars.next()),
            '"' => break,
            c => name.push(c),
        }
    }
    name
}

/// One control from Chromium's accessibility tree.
#[derive(Debug)]
struct AxControl {
    role: String,
    name: String,
    backend_node: i64,
    disabled: bool,
    /// An <option> of a drop-down <select>: chosen through the select, not clicked.
    dropdown_option: bool,
    /// A sub-field (month, day, hours…, the picker's button) inside a date or time
    /// input: that input's DOM node. Chromium draws these in a shadow tree of its own that
    /// takes no page-level locator, so the check is that typing a value through the
    /// input's locator sets it.
    host: Option<i64>,
}

/// One frame: Chromium's view of it and tabwire's.
struct Frame {
    url: String,
    /// The CDP session whose document holds this frame's nodes.
    session: String,
    controls: Vec<AxControl>,
}

/// A scan_page target, with the frame path that reaches it.
#[derive(Debug, Clone)]
struct Target {
    role: String,
    name: String,
    locator: Value,
    disabled: bool,
    /// Listed only in a continuation (a later page of the reply the cursor reached).
    continued: bool,
    /// A sub-field listed under a date or time input: that input's type.
    field_of: Option<String>,
}

#[derive(Clone, Default, Debug)]
struct Figures {
    /// Named interactive controls in Chromium's tree (drop-down options excluded).
    controls: usize,
    /// Of those, found in the snapshot with the same role and name (and, in the
    /// complete snapshot, clicked through its locator on that very element).
    matched: usize,
    /// Targets the snapshot lists.
    targets: usize,
    /// Targets paired one-to-one with a control of Chromium's tree.
    targets_matched: usize,
    /// Left out of the default snapshot inside a collapsed run its cutlist announces.
    collapsed: usize,
    /// Past the default reply's caps and reached through the continuation cursor it
    /// names.
    beyond_cap: usize,
    missing: Vec<String>,
}

impl Figures {
    fn sum<'a>(all: impl Iterator<Item = &'a Figures>) -> Figures {
        let mut total = Figures::default();
        for f in all {
            total.controls += f.controls;
            total.matched += f.matched;
            total.targets += f.targets;
            total.targets_matched += f.targets_matched;
            total.collapsed += f.collapsed;
            total.beyond_cap += f.beyond_cap;
            total.missing.extend(f.missing.iter().cloned());
        }
        total
    }

    fn recall(&self) -> f64 {
        ratio(self.matched, self.controls)
    }

    fn precision(&self) -> f64 {
        ratio(self.targets_matched, self.targets)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// The controls one snapshot mode missed, each named with its page.
fn missing_in(report: &[PageReport], mode: fn(&PageReport) -> &Figures) -> Vec<String> {
    report
        .iter()
        .flat_map(|p| {
            mode(p)
                .missing
                .iter()
                .map(move |m| format!("{}: {m}", p.page))
        })
        .collect()
}

struct PageReport {
    page: String,
    complete: Figures,
    default: Figures,
    dropdown_options: usize,
    dropdown_shown: usize,
    notes: Vec<String>,
}

impl PageReport {
    fn line(&self) -> String {
        format!(
            "{:<16} {:>8} {:>8} {:>8.1}% {:>9.1}%   {:>9} {:>9.1}% {:>10} {:>8}",
            self.page,
            self.complete.controls,
            self.complete.matched,
            self.complete.recall() * 100.0,
            self.complete.precision() * 100.0,
            self.default.matched,
            self.default.recall() * 100.0,
            self.default.collapsed,
            self.default.beyond_cap,
        )
    }
}

async fn check_page(tw: &Tabwire, cdp: &Cdp, page: &str, url: &str) -> PageReport {
    let frames = chromium_frames(cdp, url).await;
    let mut report = PageReport {
        page: page.trim_end_matches(".html").into(),
        complete: Figures::default(),
        default: Figures::default(),
        dropdown_options: 0,
        dropdown_shown: 0,
        notes: Vec::new(),
    };
    let complete_scans = scan_all_frames(tw, complete()).await;
    let default_scans = scan_all_frames(tw, json!({})).await;
    for frame in &frames {
        let (Some(full), Some(default)) = (
            complete_scans.iter().find(|s| s.url == frame.url),
            default_scans.iter().find(|s| s.url == frame.url),
        ) else {
            panic!(
                "{page}: scan_page never reached frame {} ({} controls)",
                frame.url,
                frame.controls.len()
            );
        };
        let targets = &full.targets;

        // Drop-down options: shown as <option> text inside their select.
        for option in frame.controls.iter().filter(|c| c.dropdown_option) {
            report.dropdown_options += 1;
            if full.content.contains(&format!(">{}", option.name)) {
                report.dropdown_shown += 1;
            } else {
                report.notes.push(format!(
                    "drop-down option {:?} not in the content",
                    option.name
                ));
            }
        }
        let controls: Vec<&AxControl> = frame
            .controls
            .iter()
            .filter(|c| !c.dropdown_option)
            .collect();

        // Complete snapshot: each control found and clicked through its locator.
        report.complete.controls += controls.len();
        report.complete.targets += targets.len();
        let mut used = vec![false; targets.len()];
        for control in &controls {
            match act_on(tw, cdp, frame, control, targets, &mut used).await {
                Ok(()) => report.complete.matched += 1,
                Err(why) => report.complete.missing.push(format!(
                    "{} {:?} ({}): {why}",
                    control.role, control.name, frame.url
                )),
            }
        }
        report.complete.targets_matched += used.iter().filter(|u| **u).count();
        for (target, used) in targets.iter().zip(&used) {
            if !used {
                report.notes.push(format!(
                    "listed, not a named control in Chromium's tree: {} {:?} {}",
                    target.role, target.name, target.locator
                ));
            }
        }

        // Default snapshot: each control listed, on its first page or on one its
        // cursor reaches (past the caps, or in the items its cut list collapsed).
        report.default.controls += controls.len();
        report.default.targets += default.targets.len();
        let mut used = vec![false; default.targets.len()];
        for control in &controls {
            if let Some(i) = (0..default.targets.len())
                .find(|&i| !used[i] && same_control(&default.targets[i], control))
            {
                used[i] = true;
                report.default.matched += 1;
                if default.targets[i].continued {
                    if inside_collapsed_run(cdp, frame, control, &default.cuts).await {
                        report.default.collapsed += 1;
                    } else {
                        report.default.beyond_cap += 1;
                    }
                }
            } else {
                let at = where_is(cdp, frame, control).await;
                report.default.missing.push(format!(
                    "{} {:?} ({}, {at})",
                    control.role, control.name, frame.url
                ));
            }
        }
        report.default.targets_matched += used.iter().filter(|u| **u).count();
    }
    report
}

/// A remote object for a DOM node (a control's, by its backend id), in its frame's session.
async fn resolve(cdp: &Cdp, frame: &Frame, backend_node: i64) -> Option<String> {
    let node = cdp
        .call(
            Some(&frame.session),
            "DOM.resolveNode",
            json!({ "backendNodeId": backend_node }),
        )
        .await;
    node["object"]["objectId"].as_str().map(str::to_owned)
}

/// Where a control sits, for a failure message: its position in the document and the
/// tags above it.
async fn where_is(cdp: &Cdp, frame: &Frame, control: &AxControl) -> String {
    let Some(object) = resolve(cdp, frame, control.backend_node).await else {
        return "not resolvable".into();
    };
    on_node(
        cdp,
        frame,
        &object,
        "function () { const path = []; for (let n = this; n && path.length < 6; n = n.parentElement) path.push(n.localName + (n.className ? '.' + String(n.className).split(' ')[0] : '')); return 'y=' + Math.round(this.getBoundingClientRect().top + scrollY) + ' ' + path.join(' < '); }",
        json!([]),
    )
    .await
    .as_str()
    .unwrap_or("?")
    .to_owned()
}

/// Same role (a summary's DisclosureTriangle is a button) and the same name, whitespace
/// collapsed.
fn same_control(target: &Target, control: &AxControl) -> bool {
    let role = match control.role.as_str() {
        "DisclosureTriangle" => "button",
        other => other,
    };
    target.role == role && normalize(&target.name) == normalize(&control.name)
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Finds the control among the targets and clicks it through the target's locator; Ok when
/// the page saw the click on the control's own element.
async fn act_on(
    tw: &Tabwire,
    cdp: &Cdp,
    frame: &Frame,
    control: &AxControl,
    targets: &[Target],
    used: &mut [bool],
) -> Result<(), String> {
    act_through(tw, cdp, frame, control, targets, used, Face::Btap).await
}

/// Which face's click tool a target's locator goes to.
#[derive(Clone, Copy)]
enum Face {
    /// `page_click` with the locator.
    Btap,
    /// `chrome_click_element` with the locator's ref.
    Chrome,
    /// The same tools, answering in lean replies (`--replies lean`).
    BtapLean,
    ChromeLean,
}

/// Clicks through `page_click` (a btap locator) or `chrome_click_element` (a ref): is the
/// reply an error, and what it said.
async fn click_through(tw: &Tabwire, face: Face, locator: &Value) -> (bool, String) {
    match face {
        Face::Btap => {
            let reply = tw.call("page_click", json!({ "selector": locator })).await;
            (reply.is_error, reply.envelope.to_string())
        }
        Face::Chrome => {
            let reply = tw
                .chrome("chrome_click_element", json!({ "ref": locator["ref"] }))
                .await;
            (reply.is_error, reply.text)
        }
        Face::BtapLean => {
            let reply = tw.text("page_click", json!({ "selector": locator })).await;
            (reply.is_error, reply.text)
        }
        Face::ChromeLean => {
            let reply = tw
                .text("chrome_click_element", json!({ "ref": locator["ref"] }))
                .await;
            (reply.is_error, reply.text)
        }
    }
}

async fn act_through(
    tw: &Tabwire,
    cdp: &Cdp,
    frame: &Frame,
    control: &AxControl,
    targets: &[Target],
    used: &mut [bool],
    face: Face,
) -> Result<(), String> {
    let candidates: Vec<usize> = (0..targets.len())
        .filter(|&i| !used[i] && same_control(&targets[i], control))
        .filter(|&i| targets[i].field_of.is_some() == control.host.is_some())
        .collect();
    if candidates.is_empty() {
        let near: Vec<String> = targets
            .iter()
            .filter(|t| normalize(&t.name) == normalize(&control.name))
            .map(|t| format!("{} {:?}", t.role, t.name))
            .collect();
        return Err(format!(
            "no target with that role and name (same name: {near:?})"
        ));
    }
    if control.disabled {
        // A disabled control takes no clicks; it must be listed as disabled.
        return match candidates.iter().find(|&&i| targets[i].disabled) {
            Some(&i) => {
                used[i] = true;
                Ok(())
            }
            None => Err("listed, but not marked disabled".into()),
        };
    }
    if let Some(host) = control.host {
        return fill_through(tw, cdp, frame, host, &candidates, targets, used, face).await;
    }
    let object = resolve(cdp, frame, control.backend_node)
        .await
        .expect("resolved node");
    let mut tried = Vec::new();
    for i in candidates {
        let before = on_node(
            cdp,
            frame,
            &object,
            "function () { return window.clickLog.length; }",
            json!([]),
        )
        .await
        .as_u64()
        .expect("clickLog: the corpus page's harness");
        let (failed, said) = click_through(tw, face, &targets[i].locator).await;
        if failed {
            tried.push(format!("{} → {said}", targets[i].locator));
            continue;
        }
        let hit = on_node(
            cdp,
            frame,
            &object,
            "function (n) { return window.clickLog.slice(n).some((path) => path.includes(this)); }",
            json!([{ "value": before }]),
        )
        .await;
        if hit == true {
            used[i] = true;
            return Ok(());
        }
        let seen = on_node(
            cdp,
            frame,
            &object,
            "function (n) { return window.clickLog.slice(n).map((path) => path[0].outerHTML ? path[0].outerHTML.slice(0, 80) : String(path[0])); }",
            json!([{ "value": before }]),
        )
        .await;
        tried.push(format!(
            "{} → the page saw clicks on {seen}; reply {said}",
            targets[i].locator
        ));
    }
    Err(format!("no locator put the click on it: {tried:?}"))
}

/// A sub-field of a date or time input: matched when a value typed through the listed
/// target's locator (page_type, or chrome_fill_or_select with its ref) lands in that
/// input, the one the sub-field belongs to.
#[allow(clippy::too_many_arguments)]
async fn fill_through(
    tw: &Tabwire,
    cdp: &Cdp,
    frame: &Frame,
    host: i64,
    candidates: &[usize],
    targets: &[Target],
    used: &mut [bool],
    face: Face,
) -> Result<(), String> {
    let object = resolve(cdp, frame, host).await.expect("resolved input");
    let mut tried = Vec::new();
    for &i in candidates {
        let kind = targets[i].field_of.as_deref().unwrap_or_default();
        let value = match kind {
            "date" => "2024-07-14",
            "time" => "09:30",
            "datetime-local" => "2024-07-14T09:30",
            "month" => "2024-07",
            "week" => "2024-W28",
            other => panic!("a sub-field of an input of type {other:?}"),
        };
        let locator = &targets[i].locator;
        let reply = match face {
            Face::Btap => {
                let reply = tw
                    .call("page_type", json!({ "selector": locator, "text": value }))
                    .await;
                (reply.is_error, reply.envelope.to_string())
            }
            Face::Chrome => {
                let reply = tw
                    .chrome(
                        "chrome_fill_or_select",
                        json!({ "ref": locator["ref"], "value": value }),
                    )
                    .await;
                (reply.is_error, reply.text)
            }
            Face::BtapLean => {
                let reply = tw
                    .text("page_type", json!({ "selector": locator, "text": value }))
                    .await;
                (reply.is_error, reply.text)
            }
            Face::ChromeLean => {
                let reply = tw
                    .text(
                        "chrome_fill_or_select",
                        json!({ "ref": locator["ref"], "value": value }),
                    )
                    .await;
                (reply.is_error, reply.text)
            }
        };
        let now = on_node(
            cdp,
            frame,
            &object,
            "function () { return this.value; }",
            json!([]),
        )
        .await;
        // Leave the input empty again, so the next sub-field's check starts afresh.
        on_node(
            cdp,
            frame,
            &object,
            "function () { this.value = ''; }",
            json!([]),
        )
        .await;
        if !reply.0 && now == value {
            used[i] = true;
            return Ok(());
        }
        tried.push(format!(
            "{locator} → the input holds {now}; reply {}",
            reply.1
        ));
    }
    Err(format!("no locator set the input it belongs to: {tried:?}"))
}

async fn on_node(cdp: &Cdp, frame: &Frame, object: &str, function: &str, args: Value) -> Value {
    let reply = cdp
        .call(
            Some(&frame.session),
            "Runtime.callFunctionOn",
            json!({
                "objectId": object,
                "functionDeclaration": function,
                "arguments": args,
                "returnByValue": true,
            }),
        )
        .await;
    reply["result"]["value"].clone()
}

/// Whether the control sits inside an item the default scan's cutlist collapsed: some
/// composed ancestor matches one of the cutlist's selectors.
async fn inside_collapsed_run(
    cdp: &Cdp,
    frame: &Frame,
    control: &AxControl,
    selectors: &[String],
) -> bool {
    if selectors.is_empty() {
        return false;
    }
    let object = resolve(cdp, frame, control.backend_node)
        .await
        .expect("resolved node");
    on_node(
        cdp,
        frame,
        &object,
        "function (sels) { for (let n = this; n; n = n.parentElement || (n.parentNode && n.parentNode.host)) { \
           if (n.nodeType === 1 && sels.some((s) => { try { return n.matches(s); } catch (e) { return false; } })) return true; } \
           return false; }",
        json!([{ "value": selectors }]),
    )
    .await
        == true
}

/// One frame's scan_page reply, its targets' locators qualified with the frame path.
struct FrameScan {
    path: Vec<Value>,
    url: String,
    content: String,
    targets: Vec<Target>,
    /// The cutlist's selectors.
    cuts: Vec<String>,
}

/// Scans the page and every frame it lists, depth first. A reply that names a
/// continuation is read on with its cursor to the end, as an agent would.
async fn scan_all_frames(tw: &Tabwire, args: Value) -> Vec<FrameScan> {
    let mut out = Vec::new();
    let mut queue: Vec<Vec<Value>> = vec![Vec::new()];
    while let Some(path) = queue.pop() {
        let mut call = args.clone();
        if !path.is_empty() {
            call["frame"] = json!(path);
        }
        let mut scan = tw.ok("scan_page", call.clone()).await;
        let mut continued = false;
        loop {
            collect_scan(&scan, &path, continued, &mut queue, &mut out);
            let Some(cursor) = scan["continuation"]["cursor"].as_str() else {
                break;
            };
            call["cursor"] = json!(cursor);
            scan = tw.ok("scan_page", call.clone()).await;
            continued = true;
        }
    }
    merge_pages(out)
}

/// Folds the pages of one frame's reply (same URL, read on through the cursor) into one.
fn merge_pages(pages: Vec<FrameScan>) -> Vec<FrameScan> {
    let mut merged: Vec<FrameScan> = Vec::new();
    for page in pages {
        match merged
            .iter_mut()
            .find(|m| m.url == page.url && m.path == page.path)
        {
            Some(m) => {
                m.content.push_str(&page.content);
                m.targets.extend(page.targets);
                m.cuts.extend(page.cuts);
            }
            None => merged.push(page),
        }
    }
    merged
}

/// Records one scan_page reply: its targets, and (on its first page) the frames to visit.
fn collect_scan(
    scan: &Value,
    path: &[Value],
    continued: bool,
    queue: &mut Vec<Vec<Value>>,
    out: &mut Vec<FrameScan>,
) {
    {
        let observation = &scan["observation"];
        // A frame's path starts with the path of the frame scanned (BrowserTap's
        // `observation.frames[].frame`): it scans that frame as it is.
        for frame in observation["frames"].as_array().into_iter().flatten() {
            queue.push(frame["frame"].as_array().cloned().unwrap_or_default());
        }
        let mut targets = Vec::new();
        // BrowserTap's targets, then the controls tabwire lists beside them.
        let listed = ["targets", "more_targets"]
            .iter()
            .flat_map(|list| observation[*list].as_array().cloned().unwrap_or_default());
        for t in listed {
            let t = &t;
            // The role Chromium computes (BrowserTap's `role` is the attribute as written).
            let role = t["computed_role"].as_str().or(t["tag"].as_str());
            let name = t["name"].as_str().unwrap_or("");
            // The locator carries its frame path: passed back unchanged, it acts.
            let locator = t["locator"].clone();
            assert_eq!(
                locator["frame"].as_array().map_or(&[][..], Vec::as_slice),
                path,
                "a target's locator names the frame it was scanned in: {t}"
            );
            let target = Target {
                role: role.unwrap_or("").into(),
                name: name.into(),
                locator,
                disabled: t["disabled"] == true,
                continued,
                field_of: None,
            };
            // A date or time input's sub-fields, as Chromium's tree names them.
            for field in t["fields"].as_array().into_iter().flatten() {
                targets.push(Target {
                    role: field["role"].as_str().unwrap_or("").into(),
                    name: field["name"].as_str().unwrap_or("").into(),
                    field_of: t["type"].as_str().map(str::to_owned),
                    ..target.clone()
                });
            }
            targets.push(target);
        }
        out.push(FrameScan {
            path: path.to_vec(),
            url: scan["observation"]["url"].as_str().unwrap_or("").to_owned(),
            content: scan["content"].as_str().unwrap_or("").to_owned(),
            targets,
            cuts: scan["cutlist"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["selector"].as_str().map(str::to_owned))
                .collect(),
        });
    }
}

/// Chromium's frames for the tab showing `url`, each with its named interactive controls.
async fn chromium_frames(cdp: &Cdp, url: &str) -> Vec<Frame> {
    let targets = cdp.call(None, "Target.getTargets", json!({})).await;
    let infos = targets["targetInfos"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let page = infos
        .iter()
        .find(|t| t["type"] == "page" && t["url"] == url)
        .unwrap_or_else(|| panic!("no page target at {url}: {infos:?}"));
    let page_session = cdp.attach(page["targetId"].as_str().unwrap()).await;
    // Out-of-process frames are targets of their own.
    let mut oopifs = HashMap::new();
    for t in infos.iter().filter(|t| t["type"] == "iframe") {
        let session = cdp.attach(t["targetId"].as_str().unwrap()).await;
        oopifs.insert(t["url"].as_str().unwrap_or("").to_owned(), session);
    }
    let tree = cdp
        .call(Some(&page_session), "Page.getFrameTree", json!({}))
        .await;
    let mut listed = Vec::new();
    collect_frames(&tree["frameTree"], &mut listed);
    let mut frames = Vec::new();
    for (id, frame_url) in listed {
        let (session, params) = match oopifs.get(&frame_url) {
            Some(session) => (session.clone(), json!({})),
            None => (page_session.clone(), json!({ "frameId": id })),
        };
        let ax = cdp
            .call(Some(&session), "Accessibility.getFullAXTree", params)
            .await;
        frames.push(Frame {
            url: frame_url,
            session,
            controls: named_controls(&ax["nodes"]),
        });
    }
    frames
}

fn collect_frames(tree: &Value, out: &mut Vec<(String, String)>) {
    let frame = &tree["frame"];
    out.push((
        frame["id"].as_str().unwrap_or("").to_owned(),
        frame["url"].as_str().unwrap_or("").to_owned(),
    ));
    for child in tree["childFrames"].as_array().into_iter().flatten() {
        collect_frames(child, out);
    }
}

/// Non-ignored nodes with an interactive role and a non-empty name.
fn named_controls(nodes: &Value) -> Vec<AxControl> {
    let nodes = nodes.as_array().cloned().unwrap_or_default();
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .map(|n| (n["nodeId"].as_str().unwrap_or(""), n))
        .collect();
    // An option whose list is a drop-down select's pop-up (or the select itself).
    let in_dropdown = |node: &Value| {
        let mut parent = node["parentId"].as_str();
        while let Some(p) = parent.and_then(|id| by_id.get(id)) {
            match p["role"]["value"].as_str() {
                Some("MenuListPopup" | "combobox") => return true,
                Some("listbox") => return false,
                _ => parent = p["parentId"].as_str(),
            }
        }
        false
    };
    // The date or time input a node sits inside (Chromium's roles for those inputs).
    let date_input_around = |node: &Value| {
        let mut parent = node["parentId"].as_str();
        while let Some(p) = parent.and_then(|id| by_id.get(id)) {
            if let Some("Date" | "DateTime" | "InputTime") = p["role"]["value"].as_str() {
                return p["backendDOMNodeId"].as_i64();
            }
            parent = p["parentId"].as_str();
        }
        None
    };
    let mut out = Vec::new();
    for node in &nodes {
        let role = node["role"]["value"].as_str().unwrap_or("");
        let name = node["name"]["value"].as_str().unwrap_or("");
        let interactive = INTERACTIVE.contains(&role) || role == "DisclosureTriangle";
        if node["ignored"] == true || !interactive || name.trim().is_empty() {
            continue;
        }
        let Some(backend_node) = node["backendDOMNodeId"].as_i64() else {
            continue;
        };
        let disabled = node["properties"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["name"] == "disabled" && p["value"]["value"] == true);
        out.push(AxControl {
            role: role.into(),
            name: name.into(),
            backend_node,
            disabled,
            dropdown_option: role == "option" && in_dropdown(node),
            host: date_input_around(node),
        });
    }
    out
}

/// Not asserted, reported: a page with more named controls than one scan lists (a result
/// list of 500 items, 1,000 controls). Listing only (its page has no click log).
async fn beyond_the_corpus(tw: &Tabwire, cdp: &Cdp, site: &Site) -> Value {
    let url = site.url("list/500");
    tw.ok("open_url", json!({ "url": url })).await;
    let frames = chromium_frames(cdp, &url).await;
    let scans = scan_all_frames(tw, complete()).await;
    let controls: Vec<&AxControl> = frames.iter().flat_map(|f| &f.controls).collect();
    let mut targets: Vec<Target> = scans.into_iter().flat_map(|s| s.targets).collect();
    let mut listed = 0;
    for control in &controls {
        if let Some(i) = targets.iter().position(|t| same_control(t, control)) {
            targets.swap_remove(i);
            listed += 1;
        }
    }
    println!(
        "beyond the corpus: list/500 has {} named controls; the complete snapshot, read on through its cursor, lists {listed}",
        controls.len()
    );
    assert_eq!(
        listed,
        controls.len(),
        "list/500: the cursor must reach every control past max_targets"
    );
    json!({ "page": "list/500", "controls": controls.len(), "listed": listed })
}

fn write_report(pages: &[PageReport], total: &Figures, total_default: &Figures, beyond: &Value) {
    let row = |page: &str, c: &Figures, d: &Figures| {
        json!({
            "page": page,
            "controls": c.controls,
            "matched": c.matched,
            "recall": c.recall(),
            "targets": c.targets,
            "targets_matched": c.targets_matched,
            "precision": c.precision(),
            "default_listed": d.matched,
            "default_recall": d.recall(),
            "default_collapsed": d.collapsed,
            "default_beyond_cap": d.beyond_cap,
            "default_targets": d.targets,
            "default_precision": d.precision(),
        })
    };
    let report = json!({
        "chromium": browser_version(),
        "pages": pages.iter().map(|p| row(&p.page, &p.complete, &p.default)).collect::<Vec<_>>(),
        "total": row("total", total, total_default),
        "dropdown_options": pages.iter().map(|p| p.dropdown_options).sum::<usize>(),
        "dropdown_shown": pages.iter().map(|p| p.dropdown_shown).sum::<usize>(),
        "notes": pages.iter().flat_map(|p| p.notes.iter().map(move |n| format!("{}: {n}", p.page))).collect::<Vec<_>>(),
        "beyond_the_corpus": [beyond],
    });
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fidelity-report.json");
    let _ = std::fs::write(path, serde_json::to_string_pretty(&report).unwrap());
}

fn browser_version() -> String {
    std::process::Command::new(crate::support::system_browser())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// Just enough of a CDP client: commands over the browser WebSocket, flattened sessions.
pub(crate) struct Cdp {
    sink: Mutex<
        futures_util::stream::SplitSink<
            tokio_tungstenite::WebSocketStream<
                tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
            >,
            Message,
        >,
    >,
    pending: Pending,
    next: AtomicU64,
}

impl Cdp {
    pub(crate) async fn connect(ws: &str) -> Cdp {
        let (stream, _) = tokio_tungstenite::connect_async(ws)
            .await
            .expect("CDP WebSocket");
        let (sink, mut source) = stream.split();
        let pending: Pending = Arc::default();
        let waiters = pending.clone();
        tokio::spawn(async move {
            while let Some(Ok(message)) = source.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let Ok(reply) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if let Some(id) = reply["id"].as_u64()
                    && let Some(waiter) = waiters.lock().await.remove(&id)
                {
                    let _ = waiter.send(reply);
                }
            }
        });
        Cdp {
            sink: Mutex::new(sink),
            pending,
            next: AtomicU64::new(1),
        }
    }

    /// A command's result; panics on a CDP error.
    pub(crate) async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().await.insert(id, tx);
        self.sink
            .lock()
            .await
            .send(Message::text(message.to_string()))
            .await
            .expect("CDP send");
        let reply = tokio::time::timeout(PATIENCE, rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no CDP reply"))
            .expect("CDP connection");
        if !reply["error"].is_null() {
            panic!("{method} {}: {}", message["params"], reply["error"]);
        }
        reply["result"].clone()
    }

    pub(crate) async fn attach(&self, target: &str) -> String {
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await;
        attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_owned()
    }
}
