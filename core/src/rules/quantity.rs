//! Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `1e3`): parsing by
//! the real grammar into an exact, comparable value, and the CPU, memory and
//! storage rules built on it.

use super::RuleError;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A parsed quantity: its exact value in nano-units (sub-nano fractions are
/// rounded up in magnitude, as Kubernetes does) and the original text.
/// Equality and ordering compare values, so `1Gi == 1024Mi`, `100m == 0.1`.
#[derive(Debug, Clone)]
pub struct Quantity {
    nanos: i128,
    text: String,
}

impl Quantity {
    /// The original text, e.g. `512Mi`.
    pub fn display(&self) -> &str {
        &self.text
    }
    /// The value in nano-units (1 = 1_000_000_000).
    pub fn nanos(&self) -> i128 {
        self.nanos
    }
    /// The value in whole units, if it is an integer (bytes for memory).
    pub fn whole_units(&self) -> Option<i128> {
        (self.nanos % NANO == 0).then_some(self.nanos / NANO)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}
impl Eq for Quantity {}
impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}
impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
impl std::str::FromStr for Quantity {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, RuleError> {
        parse_quantity(s)
    }
}

const NANO: i128 = 1_000_000_000;
const HELP: &str = "write a number with an optional suffix, e.g. `500m`, `2`, `512Mi` or `1Gi`";

enum Scale {
    Pow10(i64),
    Pow2(u32),
}

fn suffix_scale(suffix: &str) -> Option<Scale> {
    Some(match suffix {
        "n" => Scale::Pow10(-9),
        "u" => Scale::Pow10(-6),
        "m" => Scale::Pow10(-3),
        "" => Scale::Pow10(0),
        "k" => Scale::Pow10(3),
        "M" => Scale::Pow10(6),
        "G" => Scale::Pow10(9),
        "T" => Scale::Pow10(12),
        "P" => Scale::Pow10(15),
        "E" => Scale::Pow10(18),
        "Ki" => Scale::Pow2(10),
        "Mi" => Scale::Pow2(20),
        "Gi" => Scale::Pow2(30),
        "Ti" => Scale::Pow2(40),
        "Pi" => Scale::Pow2(50),
        "Ei" => Scale::Pow2(60),
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            Scale::Pow10(exp.parse().ok()?)
        }
    })
}

/// A "did you mean" for common wrong suffixes (`GB`, `gi`, `K`, `MiB`).
fn suggest_suffix(number: &str, suffix: &str) -> Option<String> {
    let s = suffix
        .strip_suffix("bytes")
        .or_else(|| suffix.strip_suffix(['B', 'b']))
        .unwrap_or(suffix);
    let mut chars = s.chars();
    let letter = chars.next()?.to_ascii_uppercase();
    if !"KMGTPE".contains(letter) {
        return None;
    }
    let decimal = if letter == 'K' { 'k' } else { letter };
    match chars.as_str() {
        "i" | "I" => Some(format!("did you mean `{number}{letter}i`?")),
        "" => Some(format!(
            "did you mean `{number}{decimal}` or `{number}{letter}i`?"
        )),
        _ => None,
    }
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Parses a quantity: `[+-]` digits with optional fraction, then a suffix:
/// binary `Ki Mi Gi Ti Pi Ei`, decimal `n u m "" k M G T P E`, or `e`/`E`
/// followed by an integer exponent.
pub fn parse_quantity(s: &str) -> Result<Quantity, RuleError> {
    if s.is_empty() {
        return Err(RuleError::new("quantity must not be empty", HELP));
    }
    let bad = |help: String| {
        Err(RuleError::new(
            format!("`{s}` is not a valid quantity"),
            help,
        ))
    };
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let num_len = unsigned
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(num_len);
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
        return bad(HELP.to_string());
    }
    let Some(scale) = suffix_scale(suffix) else {
        let help = suggest_suffix(&s[..s.len() - suffix.len()], suffix)
            .unwrap_or_else(|| format!("`{suffix}` is not a suffix; {HELP}"));
        return bad(help);
    };
    let too_big = || {
        Err(RuleError::new(
            format!("quantity `{s}` is out of range"),
            "use a smaller value, or a larger suffix with fewer digits",
        ))
    };
    // Mantissa as an integer with `frac_len` decimal places.
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 38 {
        return too_big();
    }
    let mantissa: i128 = match digits {
        "" => 0,
        d => match d.parse() {
            Ok(v) => v,
            Err(_) => return too_big(),
        },
    };
    // nanos = mantissa * 2^p2 * 10^(p10 + 9 - frac_len), rounded up in magnitude.
    let (p2, p10) = match scale {
        Scale::Pow10(e) => (0, e),
        Scale::Pow2(b) => (b, 0),
    };
    let Some(m) = 1i128.checked_shl(p2).and_then(|f| mantissa.checked_mul(f)) else {
        return too_big();
    };
    let shift = p10 + 9 - frac_part.len() as i64;
    let magnitude = if shift >= 0 {
        match u32::try_from(shift)
            .ok()
            .and_then(pow10)
            .and_then(|f| m.checked_mul(f))
        {
            Some(v) => v,
            None if m == 0 => 0,
            None => return too_big(),
        }
    } else {
        match u32::try_from(-shift).ok().and_then(pow10) {
            Some(d) => m / d + i128::from(m % d != 0),
            None => i128::from(m != 0),
        }
    };
    Ok(Quantity {
        nanos: if negative { -magnitude } else { magnitude },
        text: s.to_string(),
    })
}

fn positive(s: &str, q: &Quantity, what: &str, example: &str) -> Result<(), RuleError> {
    if q.nanos > 0 {
        return Ok(());
    }
    Err(RuleError::new(
        format!("{what} `{s}` must be greater than zero"),
        format!("use a positive amount, e.g. `{example}`, or leave it unset"),
    ))
}

/// A CPU amount: a valid quantity greater than zero, in whole millicores,
/// without binary suffixes (`1Gi` CPUs is almost certainly a mix-up).
pub fn cpu_quantity(s: &str) -> Result<Quantity, RuleError> {
    let q = parse_quantity(s)?;
    positive(s, &q, "CPU", "250m")?;
    if s.ends_with('i') {
        return Err(RuleError::new(
            format!("CPU `{s}` uses a binary (memory) suffix"),
            "CPU is counted in cores: write e.g. `500m` (half a core) or `2`",
        ));
    }
    if q.nanos % 1_000_000 != 0 {
        return Err(RuleError::new(
            format!("CPU `{s}` is finer than one millicore"),
            "Kubernetes does not allow CPU precision finer than 1m; round to whole millicores, e.g. `1m`",
        ));
    }
    Ok(q)
}

fn bytes_quantity(s: &str, what: &str) -> Result<Quantity, RuleError> {
    let q = parse_quantity(s)?;
    positive(s, &q, what, "512Mi")?;
    let small = [('n', "nano"), ('u', "micro"), ('m', "milli")];
    if let Some((c, name)) = small.iter().find(|(c, _)| s.ends_with(*c)) {
        let num = &s[..s.len() - 1];
        return Err(RuleError::new(
            format!(
                "{what} `{s}` is {} bytes (`{c}` means {name})",
                fraction(&q)
            ),
            format!("write `{num}Mi` (mebibytes) or `{num}M` (megabytes)"),
        ));
    }
    if q.whole_units().is_none() {
        return Err(RuleError::new(
            format!("{what} `{s}` is not a whole number of bytes"),
            "memory and storage are counted in whole bytes; use e.g. `1536Mi` or `1.5Gi`",
        ));
    }
    Ok(q)
}

/// Formats a non-negative nano value as a decimal without trailing zeros.
fn fraction(q: &Quantity) -> String {
    let (int, frac) = (q.nanos / NANO, q.nanos % NANO);
    let frac = format!("{frac:09}");
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

/// A memory amount: a quantity greater than zero, in whole bytes, without the
/// `n`, `u`, `m` suffixes (`512m` is 0.512 bytes; write `512Mi`).
pub fn memory_quantity(s: &str) -> Result<Quantity, RuleError> {
    bytes_quantity(s, "memory")
}

/// A storage size (volumes, claims): the same rule as [`memory_quantity`].
pub fn storage_quantity(s: &str) -> Result<Quantity, RuleError> {
    bytes_quantity(s, "storage")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        parse_quantity(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn values_compare_exactly() {
        assert_eq!(q("100m"), q("0.1"));
        assert_eq!(q("1Gi"), q("1024Mi"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("1E3"), q("1000"));
        assert_eq!(q("1M"), q("1e6"));
        assert_eq!(q("1.5Gi"), q("1536Mi"));
        assert_eq!(q("1000n"), q("1u"));
        assert_eq!(q("+5"), q("5."));
        assert_eq!(q(".5"), q("500m"));
        assert_eq!(q("0"), q("-0"));
        assert_eq!(q("1e-3"), q("1m"));
        assert!(q("1Gi") > q("1G"));
        assert!(q("999m") < q("1"));
        assert!(q("-1") < q("0"));
        assert!(q("1Ei") > q("1E"));
        assert_eq!(q("1E").nanos(), 1_000_000_000_000_000_000_000_000_000);
        assert_eq!(q("0.0000000001").nanos(), 1, "rounded up to 1n");
        assert_eq!(q("1e-100").nanos(), 1);
        assert_eq!(q("0e999").nanos(), 0);
        assert_eq!(q("2Ki").whole_units(), Some(2048));
        assert_eq!(q("512Mi").display(), "512Mi");
        assert_eq!(q("1e3").to_string(), "1e3");
        assert_eq!(
            "1k".parse::<Quantity>().map(|q| q.nanos()),
            Ok(1_000_000_000_000)
        );
    }

    #[test]
    fn rejects_bad_syntax() {
        for s in "|abc|.|-|+|1.2.3|1 Gi| 1|1e|1e+|1ee3|Gi|1Gi |1i|--1|1e1000000".split('|') {
            assert!(parse_quantity(s).is_err(), "{s} should be rejected");
        }
        assert!(parse_quantity("1e999").is_err(), "out of range");
        assert!(parse_quantity(&"9".repeat(39)).is_err());
    }

    #[test]
    fn suggests_suffixes() {
        let help = |s: &str| parse_quantity(s).unwrap_err().help;
        assert_eq!(help("1GB"), "did you mean `1G` or `1Gi`?");
        assert_eq!(help("1gi"), "did you mean `1Gi`?");
        assert_eq!(help("2KB"), "did you mean `2k` or `2Ki`?");
        assert_eq!(help("512MiB"), "did you mean `512Mi`?");
        assert_eq!(help("1.5g"), "did you mean `1.5G` or `1.5Gi`?");
        assert_eq!(help("10mb"), "did you mean `10M` or `10Mi`?");
        assert!(help("1xyz").contains("`xyz` is not a suffix"));
        assert!(parse_quantity("1GB").unwrap_err().message.contains("`1GB`"));
    }

    #[test]
    fn cpu() {
        for s in "1|250m|0.5|2.5|1k|1e-3".split('|') {
            assert!(cpu_quantity(s).is_ok(), "{s}");
        }
        for s in "0|-1|0m|0.0001|500u|1Gi|abc".split('|') {
            assert!(cpu_quantity(s).is_err(), "{s}");
        }
        assert!(
            cpu_quantity("0")
                .unwrap_err()
                .message
                .contains("greater than zero")
        );
    }

    #[test]
    fn memory_and_storage() {
        for s in "512Mi|1Gi|1.5Gi|1G|1000|1e9|128974848|129e6|123Mi".split('|') {
            assert!(memory_quantity(s).is_ok(), "{s}");
            assert!(storage_quantity(s).is_ok(), "{s}");
        }
        let e = memory_quantity("512m").unwrap_err();
        assert_eq!(e.message, "memory `512m` is 0.512 bytes (`m` means milli)");
        assert!(e.help.contains("write `512Mi`"), "{e:?}");
        let e = memory_quantity("1000000u").unwrap_err();
        assert_eq!(e.message, "memory `1000000u` is 1 bytes (`u` means micro)");
        for s in "0|-1Gi|0.5|1.0001k|1000000u|10n|1GB|1e-1".split('|') {
            assert!(memory_quantity(s).is_err(), "{s}");
        }
        assert!(
            storage_quantity("10m")
                .unwrap_err()
                .message
                .starts_with("storage `10m`")
        );
    }
}
