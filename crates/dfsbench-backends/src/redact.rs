//! Secrets a command line can carry, masked before anything is printed or stored.
//!
//! Credentials belong in the environment, but users put them in target URIs anyway
//! (`s3://key:SECRET@bucket/p`, `webdav://user:SECRET@host/x`, a nested
//! `?endpoint=http://u:SECRET@host`, percent-encoded or not). dfsbench masks them once, where
//! it reads its arguments, in the command line it records and in every message that quotes an
//! argument: what reaches a result, a report or a terminal is the masked text.

/// What a secret becomes.
const MASK: &str = "***";

/// Query keys whose values are secrets (matched as substrings, case-insensitively).
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "key",
    "credential",
    "signature",
];

/// This process's command line, masked: what results and reports record.
pub fn command_line() -> Vec<String> {
    std::env::args().map(|a| redact(&a)).collect()
}

/// `text` with every URI password and secret query value replaced by [`MASK`].
pub fn redact(text: &str) -> String {
    mask_query_secrets(&mask_userinfo_passwords(text))
}

/// Separators of a URI, literal or percent-encoded, as (literal, encoded).
const COLON: (&str, &str) = (":", "%3a");
const AT: (&str, &str) = ("@", "%40");
const SCHEME_END: (&str, &str) = ("://", "%3a%2f%2f");

/// Where `sep` (either form) first occurs in `lower` (a lowercased text) from `from`, and its
/// length.
fn find_sep(lower: &str, from: usize, sep: (&str, &str)) -> Option<(usize, usize)> {
    [sep.0, sep.1]
        .iter()
        .filter_map(|s| lower[from..].find(s).map(|i| (from + i, s.len())))
        .min()
}

/// Mask the password of every `scheme://user:password@host`.
fn mask_userinfo_passwords(text: &str) -> String {
    // Percent-encoding is ASCII, so byte offsets in the lowercased text are those of `text`.
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some((start, len)) = find_sep(&lower, at, SCHEME_END) {
        let authority_start = start + len;
        // The authority ends at the first path, query or fragment separator, or where the
        // argument does.
        let authority_end = lower[authority_start..]
            .find(|c: char| matches!(c, '/' | '?' | '#' | '&' | ' ' | '"' | '\'') || c.is_whitespace())
            .map_or(lower.len(), |i| authority_start + i);
        let authority_end = lower[authority_start..authority_end]
            .find("%2f")
            .map_or(authority_end, |i| authority_start + i);
        at = authority_end.max(authority_start);
        // The userinfo ends at the authority's last '@'; its password starts after its first ':'.
        let authority = &lower[authority_start..authority_end];
        let Some(userinfo_end) = [AT.0, AT.1]
            .iter()
            .filter_map(|s| authority.rfind(s))
            .max()
            .map(|i| authority_start + i)
        else {
            continue;
        };
        let Some((colon, colon_len)) = find_sep(&lower[..userinfo_end], authority_start, COLON) else {
            continue;
        };
        let password = colon + colon_len;
        if password < userinfo_end {
            out.push_str(&text[copied..password]);
            out.push_str(MASK);
            copied = userinfo_end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Mask the values of query keys such as `password=` or `secret_key=`.
fn mask_query_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let key_start = rest[..eq].rfind(['?', '&', ';']).map_or(0, |i| i + 1);
        let key = rest[key_start..eq].to_ascii_lowercase();
        let value_end = rest[eq + 1..]
            .find(|c: char| c == '&' || c == '#' || c.is_whitespace())
            .map_or(rest.len(), |i| eq + 1 + i);
        let is_query_key = key_start > 0 && !key.is_empty() && !key.contains(['/', ':', '@']);
        out.push_str(&rest[..=eq]);
        if is_query_key && SECRET_KEYS.iter().any(|k| key.contains(k)) && value_end > eq + 1 {
            out.push_str(MASK);
        } else {
            out.push_str(&rest[eq + 1..value_end]);
        }
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_passwords_in_uris_and_nested_endpoints() {
        let cases = [
            ("s3://key:SECRET@bucket/p", "s3://key:***@bucket/p"),
            ("webdav://user:SECRET@host:80/x", "webdav://user:***@host:80/x"),
            (
                "s3://b/x?endpoint=http://u:SECRET@127.0.0.1:9000&region=eu",
                "s3://b/x?endpoint=http://u:***@127.0.0.1:9000&region=eu",
            ),
            (
                "s3://b/x?endpoint=http%3A%2F%2Fu%3ASECRET%40127.0.0.1%3A9000",
                "s3://b/x?endpoint=http%3A%2F%2Fu%3A***%40127.0.0.1%3A9000",
            ),
            // A password holding '@' and ':' ends at the authority's last '@'.
            ("s3://k:p@ss:w@rd@bucket/p", "s3://k:***@bucket/p"),
            (
                "target 's3://a:SECRET@b/p?colour=1': unknown option 'colour'",
                "target 's3://a:***@b/p?colour=1': unknown option 'colour'",
            ),
            (
                "s3://b/p?secret_key=SECRET&region=x&token=T",
                "s3://b/p?secret_key=***&region=x&token=***",
            ),
        ];
        for (raw, masked) in cases {
            assert_eq!(redact(raw), masked, "{raw}");
            assert!(!redact(raw).contains("SECRET"), "{raw}");
        }
    }

    #[test]
    fn leaves_text_without_secrets_alone() {
        for text in [
            "s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1",
            "s3://KEYID@bucket/p",
            "/tmp/dfsbench-x",
            "--sizes=1000x10k",
            "hdfs://127.0.0.1:8020/x",
            "a=b c:d@e",
            "",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
