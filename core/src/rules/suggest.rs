//! "Did you mean" suggestions: the closest candidate by optimal string
//! alignment distance (Levenshtein plus adjacent transpositions).

/// Optimal string alignment distance between `a` and `b`, counted in chars:
/// insertions, deletions, substitutions and swaps of adjacent chars cost 1.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    // Three rows: i-2, i-1 and i.
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `got`, if close enough: a case-insensitive
/// match wins; otherwise the smallest [`edit_distance`] no greater than
/// `max(1, len(got) / 3)`. Ties go to the earlier candidate.
pub fn did_you_mean<'a>(
    got: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (got.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let d = if c.eq_ignore_ascii_case(got) {
            0
        } else {
            edit_distance(got, c)
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("web", "web"), 0);
        assert_eq!(edit_distance("wbe", "web"), 1, "adjacent swap costs 1");
        assert_eq!(edit_distance("ca", "abc"), 3, "OSA, not full Damerau");
        assert_eq!(edit_distance("héllo", "hello"), 1, "counted in chars");
        assert_eq!(edit_distance("flaw", "lawn"), 2);
    }

    #[test]
    fn suggestions() {
        let names = ["web", "worker", "db"];
        assert_eq!(did_you_mean("wbe", names), Some("web"));
        assert_eq!(did_you_mean("workr", names), Some("worker"));
        assert_eq!(did_you_mean("WEB", names), Some("web"));
        assert_eq!(did_you_mean("cache", names), None);
        assert_eq!(did_you_mean("", names), None);
        assert_eq!(did_you_mean("x", Vec::<&str>::new()), None);
        // Ties go to the first candidate.
        assert_eq!(did_you_mean("ab", ["ac", "ad"]), Some("ac"));
        assert_eq!(did_you_mean("ab", ["ad", "ac"]), Some("ad"));
        // A closer later candidate beats an earlier one.
        assert_eq!(
            did_you_mean("abcdefgh", ["abcdxxgh", "abcdefgx"]),
            Some("abcdefgx")
        );
        // Short words allow one edit, longer ones len/3.
        assert_eq!(did_you_mean("ab", ["xy"]), None);
        assert_eq!(did_you_mean("replicas", ["replcas"]), Some("replcas"));
        assert_eq!(did_you_mean("replicaz", ["rplicas"]), Some("rplicas"));
        assert_eq!(did_you_mean("abcdef", ["abcxyz"]), None);
    }
}
