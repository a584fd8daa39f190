//! Swift authentication: OpenDAL's Swift service takes a storage URL and a token, so dfsbench
//! obtains them the way the `swift` client does: tempauth (ST_AUTH, ST_USER, ST_KEY), Keystone
//! v3 password authentication (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, ...), or
//! a token given directly (OS_STORAGE_URL and OS_AUTH_TOKEN).

use std::env::var;

use url::{Position, Url};

use super::Gateway;
use crate::OpError;

/// Where to send object requests and the token that authorises them.
pub(super) struct SwiftSession {
    pub storage_url: String,
    pub token: String,
}

fn auth_error(what: impl std::fmt::Display) -> OpError {
    OpError::new("auth", format!("Swift authentication failed: {what}"))
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Authenticate with the first method whose variables are set.
pub(super) async fn authenticate(client: &reqwest::Client, auth_url: Option<&str>) -> Result<SwiftSession, OpError> {
    if let (Ok(storage_url), Ok(token)) = (var("OS_STORAGE_URL"), var("OS_AUTH_TOKEN")) {
        return Ok(SwiftSession { storage_url, token });
    }
    if let (Ok(user), Ok(key)) = (var("ST_USER"), var("ST_KEY")) {
        let url = auth_url
            .map(str::to_string)
            .or_else(|| var("ST_AUTH").ok())
            .ok_or_else(|| auth_error("ST_USER is set but no auth URL: set ST_AUTH or ?auth= in the target"))?;
        return tempauth(client, &url, &user, &key).await;
    }
    if let (Ok(user), Ok(password)) = (var("OS_USERNAME"), var("OS_PASSWORD")) {
        let url = auth_url
            .map(str::to_string)
            .or_else(|| var("OS_AUTH_URL").ok())
            .ok_or_else(|| auth_error("OS_USERNAME is set but OS_AUTH_URL is not"))?;
        return keystone_v3(client, &url, &user, &password).await;
    }
    Err(auth_error(
        "no credentials: set ST_AUTH/ST_USER/ST_KEY (tempauth), OS_AUTH_URL/OS_USERNAME/OS_PASSWORD/OS_PROJECT_NAME (Keystone) or OS_STORAGE_URL/OS_AUTH_TOKEN",
    ))
}

async fn tempauth(client: &reqwest::Client, url: &str, user: &str, key: &str) -> Result<SwiftSession, OpError> {
    let resp = client
        .get(url)
        .header("X-Auth-User", user)
        .header("X-Auth-Key", key)
        .send()
        .await
        .map_err(|e| auth_error(format!("cannot reach {url}: {e}")))?;
    if !resp.status().is_success() {
        return Err(auth_error(format!(
            "{url} answered {}: check ST_USER and ST_KEY",
            resp.status()
        )));
    }
    match (header(&resp, "x-storage-url"), header(&resp, "x-auth-token")) {
        (Some(storage_url), Some(token)) => Ok(SwiftSession { storage_url, token }),
        _ => Err(auth_error(format!("{url} gave no X-Storage-Url/X-Auth-Token"))),
    }
}

async fn keystone_v3(client: &reqwest::Client, url: &str, user: &str, password: &str) -> Result<SwiftSession, OpError> {
    let domain = |k: &str| var(k).unwrap_or_else(|_| "Default".into());
    let body = serde_json::json!({
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {
                    "name": user,
                    "domain": {"name": domain("OS_USER_DOMAIN_NAME")},
                    "password": password,
                }},
            },
            "scope": {"project": {
                "name": var("OS_PROJECT_NAME").unwrap_or_default(),
                "domain": {"name": domain("OS_PROJECT_DOMAIN_NAME")},
            }},
        }
    });
    let tokens = format!("{}/auth/tokens", url.trim_end_matches('/'));
    let resp = client
        .post(&tokens)
        .json(&body)
        .send()
        .await
        .map_err(|e| auth_error(format!("cannot reach {tokens}: {e}")))?;
    if !resp.status().is_success() {
        return Err(auth_error(format!(
            "{tokens} answered {}: check the OS_* variables",
            resp.status()
        )));
    }
    let token = header(&resp, "x-subject-token").ok_or_else(|| auth_error("Keystone gave no X-Subject-Token"))?;
    let doc: serde_json::Value = resp
        .json()
        .await
        .map_err(|e| auth_error(format!("unreadable token: {e}")))?;
    let region = var("OS_REGION_NAME").ok();
    let storage_url = doc["token"]["catalog"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["type"] == "object-store")
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .find(|e| e["interface"] == "public" && region.as_deref().is_none_or(|r| e["region"] == r))
        .and_then(|e| e["url"].as_str().map(str::to_string))
        .ok_or_else(|| auth_error("the Keystone catalog has no public object-store endpoint"))?;
    Ok(SwiftSession { storage_url, token })
}

/// Each proxy's base URL and the storage URL through it: authentication gives one storage URL
/// (tempauth and Keystone alike), whose account path is the same on every proxy of the
/// cluster, so only the scheme (when the entry names one), host and port change.
pub(super) fn through_proxies(storage_url: &str, proxies: &[Gateway]) -> Result<Vec<(String, String)>, OpError> {
    let url = Url::parse(storage_url)
        .map_err(|e| auth_error(format!("the storage URL '{storage_url}' it gave is not a URL ({e})")))?;
    let account = &url[Position::BeforePath..];
    Ok(proxies
        .iter()
        .map(|p| {
            let base = p.url(url.scheme());
            let through = format!("{base}{account}");
            (base, through)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_proxy_serves_the_same_account_path() {
        let proxies = [
            Gateway {
                scheme: None,
                authority: "10.0.0.2:8080".into(),
            },
            Gateway {
                scheme: Some("http".into()),
                authority: "[fd00::3]:8081".into(),
            },
        ];
        let got = through_proxies("https://lb.example:443/v1/AUTH_test", &proxies).unwrap();
        assert_eq!(
            got,
            [
                (
                    "https://10.0.0.2:8080".to_string(),
                    "https://10.0.0.2:8080/v1/AUTH_test".to_string()
                ),
                (
                    "http://[fd00::3]:8081".to_string(),
                    "http://[fd00::3]:8081/v1/AUTH_test".to_string()
                ),
            ]
        );
        assert!(through_proxies("https://lb/v1/AUTH_test", &[]).unwrap().is_empty());
        let e = through_proxies("/v1/AUTH_test", &proxies).unwrap_err();
        assert!(e.message.contains("is not a URL"), "{e}");
    }
}
