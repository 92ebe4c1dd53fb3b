//! The faces this server can serve, by name.

pub mod btap;
pub mod chrome;

use crate::face::Face;

/// Every face, by name.
pub const ALL: &[&Face] = &[&btap::FACE, &chrome::FACE];

/// Faces from a comma-separated list (`btap,chrome`), each once, in order.
pub fn by_names(list: &str) -> Result<Vec<&'static Face>, String> {
    let mut faces: Vec<&'static Face> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let face = ALL
            .iter()
            .copied()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = ALL.iter().map(|f| f.name).collect();
                format!("unknown face '{name}'; faces: {}", known.join(", "))
            })?;
        if !faces.iter().any(|f| f.name == face.name) {
            faces.push(face);
        }
    }
    if faces.is_empty() {
        return Err("name at least one face".into());
    }
    Ok(faces)
}
