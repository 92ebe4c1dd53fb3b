//! Key names and chords ("enter", "ctrl,shift,k") to CDP key events.

use serde_json::{Value, json};

use crate::error::{EngineError, Input, Result};

#[derive(Debug, Clone)]
struct Key {
    key: String,
    code: String,
    key_code: u32,
    /// What the key types when pressed without ctrl/alt/meta.
    text: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Chord {
    modifiers: Vec<(Key, u32)>,
    key: Option<Key>,
}

const ALT: u32 = 1;
const CTRL: u32 = 2;
const META: u32 = 4;
const SHIFT: u32 = 8;

/// Parses "enter", "ctrl,shift,k", "Shift+Tab", "a".
pub fn parse_chord(spec: &str) -> Result<Chord> {
    let parts: Vec<&str> = spec
        .split([',', '+'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return Err(EngineError::invalid(Input::Keys, "no key given"));
    }
    let mut chord = Chord {
        modifiers: Vec::new(),
        key: None,
    };
    for (i, part) in parts.iter().enumerate() {
        if let Some(modifier) = modifier(part) {
            chord.modifiers.push(modifier);
            continue;
        }
        if i != parts.len() - 1 {
            return Err(EngineError::invalid(
                Input::Keys,
                format!(
                    "'{part}' must come last: only modifiers (ctrl, shift, alt, meta) may precede the key"
                ),
            ));
        }
        chord.key =
            Some(named_key(part).ok_or_else(|| {
                EngineError::invalid(Input::Keys, format!("unknown key '{part}'"))
            })?);
    }
    Ok(chord)
}

fn modifier(name: &str) -> Option<(Key, u32)> {
    let (key, code, key_code, bit) = match name.to_ascii_lowercase().as_str() {
        "ctrl" | "control" => ("Control", "ControlLeft", 17, CTRL),
        "shift" => ("Shift", "ShiftLeft", 16, SHIFT),
        "alt" | "option" => ("Alt", "AltLeft", 18, ALT),
        "meta" | "cmd" | "command" | "super" | "win" => ("Meta", "MetaLeft", 91, META),
        _ => return None,
    };
    Some((
        Key {
            key: key.into(),
            code: code.into(),
            key_code,
            text: None,
        },
        bit,
    ))
}

fn named_key(name: &str) -> Option<Key> {
    let special = |key: &str, code: &str, key_code: u32, text: Option<&str>| Key {
        key: key.into(),
        code: code.into(),
        key_code,
        text: text.map(str::to_owned),
    };
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "enter" | "return" => special("Enter", "Enter", 13, Some("\r")),
        "tab" => special("Tab", "Tab", 9, None),
        "escape" | "esc" => special("Escape", "Escape", 27, None),
        "backspace" => special("Backspace", "Backspace", 8, None),
        "delete" | "del" => special("Delete", "Delete", 46, None),
        "space" => special(" ", "Space", 32, Some(" ")),
        "arrowup" | "up" => special("ArrowUp", "ArrowUp", 38, None),
        "arrowdown" | "down" => special("ArrowDown", "ArrowDown", 40, None),
        "arrowleft" | "left" => special("ArrowLeft", "ArrowLeft", 37, None),
        "arrowright" | "right" => special("ArrowRight", "ArrowRight", 39, None),
        "home" => special("Home", "Home", 36, None),
        "end" => special("End", "End", 35, None),
        "pageup" => special("PageUp", "PageUp", 33, None),
        "pagedown" => special("PageDown", "PageDown", 34, None),
        "insert" => special("Insert", "Insert", 45, None),
        _ => {
            if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u32>().ok())
                && (1..=12).contains(&n)
            {
                return Some(special(&format!("F{n}"), &format!("F{n}"), 111 + n, None));
            }
            let mut chars = name.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            let upper = c.to_ascii_uppercase();
            let (code, key_code) = if c.is_ascii_alphabetic() {
                (format!("Key{upper}"), upper as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else {
                (String::new(), 0)
            };
            Key {
                key: c.to_string(),
                code,
                key_code,
                text: Some(c.to_string()),
            }
        }
    })
}

impl Chord {
    pub fn describe(&self) -> String {
        self.modifiers
            .iter()
            .map(|(k, _)| k.key.as_str())
            .chain(self.key.as_ref().map(|k| k.key.as_str()))
            .collect::<Vec<_>>()
            .join("+")
    }

    /// keyDown for each modifier, then the key down and up, then the modifiers up.
    pub(crate) fn events(&self) -> Vec<Value> {
        let mut mask = 0;
        let mut events = Vec::new();
        for (key, bit) in &self.modifiers {
            mask |= bit;
            events.push(key_event("rawKeyDown", key, mask, None));
        }
        if let Some(key) = &self.key {
            // A chord with ctrl/alt/meta is a shortcut, not typing.
            let types_text = mask & (CTRL | ALT | META) == 0;
            let text = key.text.as_deref().filter(|_| types_text).map(|t| {
                if mask & SHIFT != 0 {
                    t.to_uppercase()
                } else {
                    t.to_owned()
                }
            });
            let down = if text.is_some() {
                "keyDown"
            } else {
                "rawKeyDown"
            };
            // Shift changes what a character key reports, as on a real keyboard.
            let mut key = key.clone();
            if mask & SHIFT != 0 && key.key.chars().count() == 1 {
                key.key = key.key.to_uppercase();
            }
            events.push(key_event(down, &key, mask, text.as_deref()));
            events.push(key_event("keyUp", &key, mask, None));
        }
        for (key, bit) in self.modifiers.iter().rev() {
            mask &= !bit;
            events.push(key_event("keyUp", key, mask, None));
        }
        events
    }
}

fn key_event(kind: &str, key: &Key, modifiers: u32, text: Option<&str>) -> Value {
    let mut event = json!({
        "type": kind,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
        "modifiers": modifiers,
    });
    if let Some(text) = text {
        event["text"] = json!(text);
        event["unmodifiedText"] = json!(text);
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chord_orders_modifiers_around_the_key() {
        let chord = parse_chord("ctrl,shift,k").unwrap();
        let kinds: Vec<_> = chord
            .events()
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["type"].as_str().unwrap(),
                    e["key"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "rawKeyDown Control",
                "rawKeyDown Shift",
                "rawKeyDown K",
                "keyUp K",
                "keyUp Shift",
                "keyUp Control"
            ]
        );
        assert_eq!(chord.describe(), "Control+Shift+k");
    }

    #[test]
    fn enter_types_a_carriage_return() {
        let events = parse_chord("enter").unwrap().events();
        assert_eq!(events[0]["text"], "\r");
    }

    #[test]
    fn unknown_keys_and_misplaced_modifiers_are_named() {
        let err = parse_chord("ctrl,bogus").unwrap_err().to_string();
        assert!(err.contains("bogus"), "{err}");
        let err = parse_chord("k,ctrl").unwrap_err().to_string();
        assert!(err.contains("'k' must come last"), "{err}");
    }
}
