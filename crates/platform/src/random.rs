//! Randomness from the operating system (getrandom on Linux, getentropy on macOS,
//! ProcessPrng on Windows).

/// Fills `bytes` with random bytes.
pub fn fill(bytes: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(bytes).map_err(|e| std::io::Error::other(format!("no system randomness: {e}")))
}

/// `bytes` random bytes as lower-case hex.
pub fn hex(bytes: usize) -> std::io::Result<String> {
    let mut buffer = vec![0u8; bytes];
    fill(&mut buffer)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        let (a, b) = (super::hex(16).unwrap(), super::hex(16).unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
