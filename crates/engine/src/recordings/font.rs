//! Labels on GIF frames: text in a small pixel font of tabwire's own (5 x 7, capitals,
//! digits and common punctuation, drawn twice its size), white on a dark pill. A frame
//! is RGBA; lower-case letters are drawn as capitals, and a character the font lacks as
//! `?`, so any label stays legible without a font file or a text shaper.

/// Each glyph's seven rows, the high bit of five the leftmost pixel.
const GLYPHS: &[(char, [u8; 7])] = &[
    (' ', [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ('!', [0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04]),
    ('"', [0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ('#', [0x0a, 0x1f, 0x0a, 0x0a, 0x0a, 0x1f, 0x0a]),
    ('%', [0x19, 0x1a, 0x04, 0x04, 0x08, 0x16, 0x13]),
    ('&', [0x0c, 0x12, 0x0c, 0x08, 0x15, 0x12, 0x0d]),
    ('\'', [0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ('(', [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02]),
    (')', [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08]),
    ('*', [0x00, 0x15, 0x0e, 0x1f, 0x0e, 0x15, 0x00]),
    ('+', [0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00]),
    (',', [0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08]),
    ('-', [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00]),
    ('.', [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c]),
    ('/', [0x01, 0x02, 0x02, 0x04, 0x08, 0x08, 0x10]),
    ('0', [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e]),
    ('1', [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e]),
    ('2', [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f]),
    ('3', [0x1e, 0x01, 0x01, 0x0e, 0x01, 0x01, 0x1e]),
    ('4', [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02]),
    ('5', [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e]),
    ('6', [0x0e, 0x10, 0x10, 0x1e, 0x11, 0x11, 0x0e]),
    ('7', [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08]),
    ('8', [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e]),
    ('9', [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x01, 0x0e]),
    (':', [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00]),
    (';', [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08]),
    ('<', [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02]),
    ('=', [0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00]),
    ('>', [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08]),
    ('?', [0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04]),
    ('@', [0x0e, 0x11, 0x17, 0x15, 0x17, 0x10, 0x0e]),
    ('A', [0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11]),
    ('B', [0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e]),
    ('C', [0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e]),
    ('D', [0x1e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1e]),
    ('E', [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f]),
    ('F', [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10]),
    ('G', [0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f]),
    ('H', [0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11]),
    ('I', [0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e]),
    ('J', [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c]),
    ('K', [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11]),
    ('L', [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f]),
    ('M', [0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11]),
    ('N', [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11]),
    ('O', [0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e]),
    ('P', [0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10]),
    ('Q', [0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d]),
    ('R', [0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11]),
    ('S', [0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e]),
    ('T', [0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04]),
    ('U', [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e]),
    ('V', [0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04]),
    ('W', [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a]),
    ('X', [0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11]),
    ('Y', [0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04]),
    ('Z', [0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f]),
    ('[', [0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e]),
    ('\\', [0x10, 0x08, 0x08, 0x04, 0x02, 0x02, 0x01]),
    (']', [0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e]),
    ('_', [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f]),
];

/// Glyph pixels are drawn as SCALE x SCALE blocks.
const SCALE: i32 = 2;
const GLYPH_W: i32 = 5 * SCALE;
const GLYPH_H: i32 = 7 * SCALE;
/// Between glyphs, and around the text inside its pill.
const SPACING: i32 = SCALE;
const PADDING: i32 = 4;
/// How far from its anchor a label sits, and from the frame's edges.
const OFFSET: i32 = 14;
const MARGIN: i32 = 4;
/// The longest label drawn; a longer one ends in `...`.
pub const MAX_LABEL: usize = 48;

/// The glyph drawn for `c`.
fn glyph(c: char) -> [u8; 7] {
    let c = match c {
        '\u{2026}' => '.',
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201c}' | '\u{201d}' => '"',
        '\u{2192}' => '>',
        '\u{d7}' => 'X',
        c => c.to_ascii_uppercase(),
    };
    GLYPHS
        .iter()
        .find(|(g, _)| *g == c)
        .or_else(|| GLYPHS.iter().find(|(g, _)| *g == '?'))
        .map_or([0; 7], |(_, rows)| *rows)
}

/// The label as drawn: at most MAX_LABEL characters.
fn shortened(text: &str) -> Vec<char> {
    let text: Vec<char> = text.trim().chars().filter(|c| !c.is_control()).collect();
    if text.len() <= MAX_LABEL {
        return text;
    }
    let mut cut: Vec<char> = text[..MAX_LABEL - 3].to_vec();
    cut.extend(['.', '.', '.']);
    cut
}

/// Draws `text` on an RGBA frame in a pill beside `anchor` (right of it, or left when
/// there is no room), or in the top-left corner without one. Nothing for empty text.
pub fn draw_label(
    pixels: &mut [u8],
    width: u16,
    height: u16,
    anchor: Option<(i32, i32)>,
    text: &str,
) {
    let chars = shortened(text);
    if chars.is_empty() {
        return;
    }
    let (w, h) = (i32::from(width), i32::from(height));
    let pill_w = chars.len() as i32 * (GLYPH_W + SPACING) - SPACING + 2 * PADDING;
    let pill_h = GLYPH_H + 2 * PADDING;
    let (mut x, mut y) = match anchor {
        Some((ax, ay)) => {
            let right = ax + OFFSET;
            let x = if right + pill_w > w - MARGIN {
                ax - OFFSET - pill_w
            } else {
                right
            };
            (x, ay - pill_h / 2)
        }
        None => (MARGIN, MARGIN),
    };
    x = x.clamp(MARGIN.min(w - pill_w).max(0), (w - MARGIN - pill_w).max(0));
    y = y.clamp(MARGIN.min(h - pill_h).max(0), (h - MARGIN - pill_h).max(0));
    for py in y..(y + pill_h).min(h) {
        for px in x..(x + pill_w).min(w) {
            blend(pixels, w, (px, py), [20, 20, 24], 0.85);
        }
    }
    let mut gx = x + PADDING;
    for c in chars {
        let rows = glyph(c);
        for (row, bits) in rows.iter().enumerate() {
            for col in 0..5 {
                if bits & (0x10 >> col) == 0 {
                    continue;
                }
                for dy in 0..SCALE {
                    for dx in 0..SCALE {
                        let at = (gx + col * SCALE + dx, y + PADDING + row as i32 * SCALE + dy);
                        if at.0 < w && at.1 < h {
                            blend(pixels, w, at, [255, 255, 255], 1.0);
                        }
                    }
                }
            }
        }
        gx += GLYPH_W + SPACING;
    }
}

/// Mixes `colour` into one pixel, `alpha` of it.
fn blend(pixels: &mut [u8], width: i32, (x, y): (i32, i32), colour: [u8; 3], alpha: f32) {
    if x < 0 || y < 0 {
        return;
    }
    let at = ((y * width + x) * 4) as usize;
    if let Some(pixel) = pixels.get_mut(at..at + 3) {
        for (channel, value) in pixel.iter_mut().zip(colour) {
            *channel = (f32::from(*channel) * (1.0 - alpha) + f32::from(value) * alpha) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The white pixels of a label drawn alone on a black frame, as rows of `#`.
    fn drawn(text: &str, width: u16, height: u16) -> Vec<String> {
        let mut pixels = vec![0u8; usize::from(width) * usize::from(height) * 4];
        draw_label(&mut pixels, width, height, None, text);
        (0..usize::from(height))
            .map(|y| {
                (0..usize::from(width))
                    .map(|x| {
                        if pixels[(y * usize::from(width) + x) * 4] == 255 {
                            '#'
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_label_is_drawn_glyph_by_glyph_in_its_pill() {
        let rows = drawn("Hi", 40, 30);
        // The pill starts at the margin; its text PADDING further in, each pixel 2 x 2.
        let top = (MARGIN + PADDING) as usize;
        let left = (MARGIN + PADDING) as usize;
        // H's first row: #...#; I's first row: .###.
        assert_eq!(&rows[top][left..left + 10], "##......##");
        assert_eq!(&rows[top][left + 12..left + 22], "..######..");
        // Lower case is drawn as capitals.
        assert_eq!(drawn("hi", 40, 30), rows);
        // A character the font lacks is drawn as `?`; control characters not at all.
        assert_eq!(drawn("\u{4e2d}", 40, 30), drawn("?", 40, 30));
        assert_eq!(drawn("a\nb", 40, 30), drawn("ab", 40, 30));
    }

    #[test]
    fn a_label_stays_inside_a_small_frame_and_long_ones_are_cut() {
        // Wider than the frame: drawn from its left edge, nothing written out of bounds.
        let rows = drawn("a label much wider than this frame", 60, 20);
        assert!(rows.iter().any(|r| r.contains('#')));
        assert_eq!(shortened(&"x".repeat(100)).len(), MAX_LABEL);
        assert!(shortened(&"x".repeat(100)).ends_with(&['.', '.', '.']));
        assert!(shortened("  ").is_empty());
    }

    #[test]
    fn every_glyph_is_five_pixels_wide_and_distinct() {
        for (c, rows) in GLYPHS {
            assert!(rows.iter().all(|r| *r < 0x20), "{c}");
        }
        for (i, (a, rows)) in GLYPHS.iter().enumerate() {
            for (b, other) in &GLYPHS[i + 1..] {
                assert!(rows != other || *a == ' ', "{a} and {b} look the same");
            }
        }
    }
}
