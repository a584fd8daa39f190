//! MinIO's HTTP health and admin APIs, through curl (SigV4 with the lab's root key, the secret
//! in a netrc file), from the root namespace: `mc` is not installed, and the server binary has no
//! admin commands.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{endpoint, REGION};
use crate::state::{NodeState, State};
use crate::sys::{run, wait_for};
use crate::{Error, Result};

const CALL_LIMIT: Duration = Duration::from_secs(30);
/// A dry-run heal of every object; a few hundred objects take a second or two.
const DRY_RUN_LIMIT: Duration = Duration::from_secs(120);

pub(super) fn netrc(state: &State) -> PathBuf {
    state.dir().join("netrc")
}

/// A curl call; (HTTP status, body). `extra` are further curl arguments.
fn curl(state: Option<&State>, url: &str, extra: &[&str]) -> Result<(u16, String)> {
    let max = CALL_LIMIT.as_secs().to_string();
    // Lab traffic never goes through a proxy.
    let mut args = vec!["-sS", "--noproxy", "*", "--max-time", &max, "-w", "\n%{http_code}"];
    let netrc = state.map(|s| netrc(s).display().to_string());
    // The admin API signs with service s3 too.
    let sigv4 = format!("aws:amz:{REGION}:s3");
    if let Some(n) = &netrc {
        args.extend_from_slice(&["--netrc-file", n, "--aws-sigv4", &sigv4]);
        args.extend_from_slice(&["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]);
    }
    args.extend_from_slice(extra);
    args.push(url);
    let out = run("curl", &args, CALL_LIMIT + Duration::from_secs(5))?;
    let (body, code) = out.rsplit_once('\n').unwrap_or(("", out.as_str()));
    let code = code
        .trim()
        .parse()
        .map_err(|_| Error::runtime(format!("curl {url}: no HTTP status in its output")))?;
    Ok((code, body.to_string()))
}

/// The status of an unauthenticated GET (health endpoints), None when nothing answers.
pub(super) fn http_status(url: &str) -> Option<u16> {
    curl(None, url, &["-o", "/dev/null"]).ok().map(|(c, _)| c)
}

/// The response headers of a GET, lower-cased, with the status.
fn head(url: &str) -> Option<(u16, String)> {
    let (code, headers) = curl(None, url, &["-o", "/dev/null", "-D", "-"]).ok()?;
    Some((code, headers.to_ascii_lowercase()))
}

pub(super) fn make_bucket(state: &State, node: &NodeState, bucket: &str) -> Result<()> {
    let url = format!("{}/{bucket}", endpoint(node));
    match curl(Some(state), &url, &["-X", "PUT"])? {
        // 409: it exists already, and is ours (BucketAlreadyOwnedByYou).
        (200 | 409, _) => Ok(()),
        (code, body) => Err(Error::runtime(format!(
            "PUT bucket {bucket}: HTTP {code} {}",
            body.trim()
        ))),
    }
}

fn admin(state: &State, node: &NodeState, path_and_query: &str, body: &str) -> Result<(u16, String)> {
    let url = format!("{}/minio/admin/v3{path_and_query}", endpoint(node));
    curl(Some(state), &url, &["-X", "POST", "--data-binary", body])
}

fn admin_ok(state: &State, node: &NodeState, path_and_query: &str, body: &str) -> Result<Value> {
    let (code, text) = admin(state, node, path_and_query, body)?;
    if code != 200 {
        return Err(Error::runtime(format!(
            "MinIO admin {path_and_query}: HTTP {code} {}",
            text.trim()
        )));
    }
    serde_json::from_str(&text).map_err(|e| Error::runtime(format!("MinIO admin {path_and_query}: not JSON ({e})")))
}

/// Start a heal sequence over every bucket (what `mc admin heal -r` does), run by the server in
/// the background; one that runs already is left to finish.
fn start_heal_on(state: &State, node: &NodeState) -> Result<()> {
    let opts = r#"{"recursive":true,"dryRun":false,"remove":true,"scanMode":1}"#;
    match admin(state, node, "/heal/", opts)? {
        (200, _) => Ok(()),
        (_, text) if already_running(&text) => Ok(()),
        (code, text) => Err(Error::runtime(format!("MinIO heal: HTTP {code} {}", text.trim()))),
    }
}

fn already_running(text: &str) -> bool {
    text.contains("XMinioHealAlreadyRunning") || text.contains("already running")
}

/// Start a heal through a node other than `not` (a node that just started answers 503 until
/// it has joined), as soon as the cluster takes it.
pub(super) fn start_heal(state: &State, not: &str) -> Result<()> {
    let others: Vec<&NodeState> = state.nodes.iter().filter(|n| n.name != not).collect();
    let mut last = Error::runtime("no other MinIO node to start a heal on".into());
    wait_for("MinIO to start a heal", Duration::from_secs(60), || {
        others
            .iter()
            .find_map(|n| start_heal_on(state, n).map_err(|e| last = e).ok())
    })
    .map_err(|e| Error::runtime(format!("{e} (last: {last})")))
}

/// One object (or bucket, or the drives' format) a heal sequence looked at.
#[derive(Debug, PartialEq)]
pub(super) struct HealItem {
    pub what: String,
    /// Drive states before healing: ok, missing, offline, corrupt, ...
    pub states: Vec<String>,
}

fn heal_items(status: &Value) -> Vec<HealItem> {
    let items = field(status, "items").as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .map(|i| HealItem {
            what: format!(
                "{} {}/{}",
                i["type"].as_str().unwrap_or("?"),
                i["bucket"].as_str().unwrap_or(""),
                i["object"].as_str().unwrap_or("")
            ),
            states: i["before"]["drives"]
                .as_array()
                .map(|d| {
                    d.iter()
                        .map(|x| x["state"].as_str().unwrap_or("?").to_string())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// A field of the heal status: the server sends `Summary`, `Items`, `Detail` (its own struct
/// has no JSON names), madmin documents them lower-case.
fn field<'a>(status: &'a Value, lower: &str) -> &'a Value {
    let mut upper = lower.to_string();
    upper[..1].make_ascii_uppercase();
    match &status[lower] {
        Value::Null => &status[upper.as_str()],
        v => v,
    }
}

/// What a dry-run heal found still to heal: None when every item has every drive `ok`.
pub(super) fn heal_pending(items: &[HealItem]) -> Option<String> {
    let bad: Vec<&HealItem> = items.iter().filter(|i| i.states.iter().any(|s| s != "ok")).collect();
    let first = bad.first()?;
    Some(format!(
        "{} items with missing shards (e.g. {}: drives {})",
        bad.len(),
        first.what,
        first.states.join(",")
    ))
}

/// A dry-run heal of every bucket: starts a sequence, then polls it (each poll hands over the
/// items found since the last) until it finishes.
fn dry_run_heal(state: &State, node: &NodeState) -> Result<Option<String>> {
    let opts = r#"{"recursive":true,"dryRun":true,"scanMode":1}"#;
    // No forceStart: a real heal running on the same path must not be stopped by a probe.
    let (code, text) = admin(state, node, "/heal/", opts)?;
    if code != 200 {
        if already_running(&text) {
            return Ok(Some("a heal sequence is still running".into()));
        }
        return Err(Error::runtime(format!(
            "MinIO heal dry run: HTTP {code} {}",
            text.trim()
        )));
    }
    let start: Value =
        serde_json::from_str(&text).map_err(|e| Error::runtime(format!("MinIO heal dry run: not JSON ({e})")))?;
    let token = start["clientToken"]
        .as_str()
        .ok_or_else(|| Error::runtime("MinIO heal dry run: no clientToken".into()))?
        .to_string();
    let deadline = Instant::now() + DRY_RUN_LIMIT;
    let mut items = Vec::new();
    loop {
        // Encoded as SigV4 wants it (the token has a colon; curl would sign it raw).
        let query = format!("/heal/?clientToken={}", token.replace(':', "%3A"));
        let status = admin_ok(state, node, &query, "")?;
        items.extend(heal_items(&status));
        match field(&status, "summary").as_str().unwrap_or("") {
            "finished" => return Ok(heal_pending(&items)),
            "running" => {}
            other => {
                return Err(Error::runtime(format!(
                    "MinIO heal dry run {other}: {}",
                    field(&status, "detail").as_str().unwrap_or("")
                )))
            }
        }
        if Instant::now() > deadline {
            return Err(Error::runtime(format!(
                "MinIO heal dry run still running after {} s",
                DRY_RUN_LIMIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// From background-heal/status: nodes MinIO lists offline, drives not `ok` or being healed.
pub(super) fn drives_pending(status: &Value, want: usize) -> Option<String> {
    let offline: Vec<&str> = status["offline_nodes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !offline.is_empty() {
        return Some(format!("nodes offline: {}", offline.join(" ")));
    }
    let sets = status["sets"].as_array().map(Vec::as_slice).unwrap_or_default();
    let drives: Vec<&Value> = sets
        .iter()
        .flat_map(|s| s["disks"].as_array().map(Vec::as_slice).unwrap_or_default())
        .collect();
    let healing = drives.iter().filter(|d| d["healing"].as_bool() == Some(true)).count();
    let not_ok: Vec<&&Value> = drives.iter().filter(|d| d["state"].as_str() != Some("ok")).collect();
    if drives.len() < want {
        return Some(format!("{} of {want} drives reported", drives.len()));
    }
    if healing > 0 {
        return Some(format!("{healing} drives healing"));
    }
    not_ok.first().map(|d| {
        format!(
            "{} drives not ok (e.g. {}: {})",
            not_ok.len(),
            d["endpoint"].as_str().unwrap_or("?"),
            d["state"].as_str().unwrap_or("no state")
        )
    })
}

/// MinIO's own view of "every shard exists", in this order (the first that fails is reported):
/// 1. some node answers `GET /minio/health/live` (node1 first);
/// 2. its `GET /minio/health/cluster` is 200 (write quorum) with no `X-Minio-Healing-Drives`;
/// 3. admin `background-heal/status`: no offline node, all 8 drives listed, each `ok` and not
///    healing (a wiped drive heals here);
/// 4. a dry-run heal of every bucket (admin `heal/` with `dryRun`, what `mc admin heal -r
///    --dry-run` does) finds no object, bucket or format entry with a drive in another state
///    than `ok` (objects written while a node was away are `missing` there until healed).
///
/// When only step 4 fails, the probe starts a real heal (as after `restart` and `wipe`): MinIO
/// itself left such shards missing for 5 minutes and more here (its MRF queue gives up while the
/// node is away; its scanner checks an object in 1 of 1024 cycles), so without it recovery after
/// stop/cont or cut-link/heal-link would never finish. Probes report pending while it runs.
pub(super) fn probe(state: &State) -> Result<Option<String>> {
    let Some(node) = state
        .nodes
        .iter()
        .find(|n| http_status(&format!("{}/minio/health/live", endpoint(n))) == Some(200))
    else {
        return Err(Error::runtime("no MinIO node of the lab answers".into()));
    };
    match head(&format!("{}/minio/health/cluster", endpoint(node))) {
        None => return Err(Error::runtime(format!("MinIO on {} does not answer", node.name))),
        Some((code, _)) if code != 200 => return Ok(Some(format!("no write quorum (cluster health HTTP {code})"))),
        Some((_, headers)) => {
            if let Some(n) = header(&headers, "x-minio-healing-drives") {
                return Ok(Some(format!("{n} drives healing")));
            }
        }
    }
    let want = state.nodes.len() * super::DRIVES_PER_NODE;
    let status = admin_ok(state, node, "/background-heal/status", "")?;
    if let Some(why) = drives_pending(&status, want) {
        return Ok(Some(why));
    }
    let pending = dry_run_heal(state, node)?;
    if pending.as_ref().is_some_and(|p| p.contains("missing shards")) {
        // Every drive is online, shards are missing: MinIO would leave them to its scanner (1 in
        // 1024 cycles), so start the heal an operator runs. The next probe sees it running.
        start_heal_on(state, node)?;
        return Ok(pending.map(|p| format!("{p}; heal started")));
    }
    Ok(pending)
}

fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == name)
        .map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{drives_pending, field, heal_items, heal_pending};

    #[test]
    fn a_dry_run_with_a_missing_shard_is_pending() {
        let status = json!({"Summary": "finished", "Items": [
            {"type": "object", "bucket": "b", "object": "o1",
             "before": {"drives": [{"state": "ok"}, {"state": "ok"}]}},
            {"type": "object", "bucket": "b", "object": "o2",
             "before": {"drives": [{"state": "ok"}, {"state": "missing"}]}}
        ]});
        assert_eq!(field(&status, "summary"), "finished");
        let items = heal_items(&status);
        assert_eq!(heal_pending(&items[..1]), None);
        assert_eq!(
            heal_pending(&items).as_deref(),
            Some("1 items with missing shards (e.g. object b/o2: drives ok,missing)")
        );
    }

    #[test]
    fn offline_nodes_and_healing_or_absent_drives_are_pending() {
        let ok = json!({"offline_nodes": [], "sets": [{"disks": [{"state": "ok"}, {"state": "ok"}]}]});
        assert_eq!(drives_pending(&ok, 2), None);
        assert_eq!(drives_pending(&ok, 4).as_deref(), Some("2 of 4 drives reported"));
        let offline = json!({"offline_nodes": ["198.18.4.2:9000"], "sets": []});
        assert_eq!(
            drives_pending(&offline, 2).as_deref(),
            Some("nodes offline: 198.18.4.2:9000")
        );
        let healing = json!({"sets": [{"disks": [{"state": "ok", "healing": true}, {"state": "ok"}]}]});
        assert_eq!(drives_pending(&healing, 2).as_deref(), Some("1 drives healing"));
    }
}
