//! Random values the apiserver generates: uids, generated-name suffixes, serials and tokens, all from the
//! operating system's source through ring (already the sim's TLS provider).

use ring::rand::{SecureRandom, SystemRandom};

/// `N` bytes from the operating system's random source.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    // The OS source fails only when the kernel has none (no /dev/urandom, no getrandom(2)); the sim
    // cannot issue uids or tokens without it.
    SystemRandom::new()
        .fill(&mut out)
        .expect("the operating system's random source is available");
    out
}

/// Five characters from the apiserver's alphabet for generated names (`utilrand.String`): no vowels, no
/// characters that read alike.
pub(crate) fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    // Bytes at or above the largest multiple of the alphabet's length are dropped, so every character is
    // equally likely.
    let limit = (256 / ALPHABET.len() * ALPHABET.len()) as u8;
    let mut out = String::with_capacity(5);
    while out.len() < 5 {
        for b in bytes::<16>() {
            if b < limit && out.len() < 5 {
                out.push(ALPHABET[b as usize % ALPHABET.len()] as char);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_use_the_apiserver_alphabet_and_differ() {
        let a = name_suffix();
        assert_eq!(a.len(), 5);
        assert!(
            a.bytes()
                .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c))
        );
        assert_ne!(bytes::<16>(), bytes::<16>());
    }
}
