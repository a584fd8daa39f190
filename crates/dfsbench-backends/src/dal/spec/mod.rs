//! Target URIs of network services, and the OpenDAL operators built from them.
//!
//! Credentials never come from the URI: each ecosystem's usual variables and files are read
//! (AWS_* and profiles for S3, ST_*/OS_* for Swift, HADOOP_USER_NAME for HDFS), so a URI can be
//! logged and stored in result files as it is.

use std::collections::BTreeMap;

use url::Url;

use crate::OpError;

/// Which service a URI names, with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Service {
    /// `s3://bucket/prefix?endpoint=http://host:9000&region=us-east-1`, or with several
    /// gateways of one store `s3://h1:9000,h2:9000/bucket/prefix` (or a comma-separated
    /// `endpoint=`): workers are spread over them round-robin.
    S3 {
        bucket: String,
        /// Empty: AWS's default endpoint.
        endpoints: Vec<String>,
        region: Option<String>,
        virtual_host: bool,
    },
    /// `swift://container/prefix?auth=http://host:8080/auth/v1.0` (tempauth) or Keystone via OS_*;
    /// with several proxies `swift://p1:8080,p2:8080/container/prefix?auth=...`: the one storage
    /// URL authentication gives is used on each proxy, workers spread over them round-robin.
    Swift {
        container: String,
        auth_url: Option<String>,
        /// Empty: the storage URL's own host.
        proxies: Vec<Gateway>,
    },
    /// `hdfs://namenode:8020/path` through the native RPC protocol.
    Hdfs { name_node: String },
    /// `webhdfs://namenode:9870/path` through the NameNode's REST API.
    Webhdfs { endpoint: String },
    /// `webdav://host:port/path` (`webdavs://` for TLS).
    Webdav { endpoint: String },
    /// `alluxio://proxy:39999/path` through the Alluxio REST proxy.
    Alluxio { endpoint: String },
}

impl Service {
    pub fn backend(&self) -> &'static str {
        match self {
            Service::S3 { .. } => "s3",
            Service::Swift { .. } => "swift",
            Service::Hdfs { .. } => "hdfs",
            Service::Webhdfs { .. } => "webhdfs",
            Service::Webdav { .. } => "webdav",
            Service::Alluxio { .. } => "alluxio",
        }
    }
}

/// One gateway of a list (`--endpoints`, or the hosts of `s3://h1:9000,h2:9000/bucket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gateway {
    /// `http` or `https` when the entry said; else the target's (S3: `tls=1`; Swift: the
    /// storage URL's).
    pub scheme: Option<String>,
    /// `host:port` (`[v6]:port`), or a host alone.
    pub authority: String,
}

impl Gateway {
    /// The gateway's base URL, with `default_scheme` when the entry named none.
    pub fn url(&self, default_scheme: &str) -> String {
        format!(
            "{}://{}",
            self.scheme.as_deref().unwrap_or(default_scheme),
            self.authority
        )
    }
}

/// A parsed network target: the service and the prefix inside it under which runs live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub service: Service,
    /// Path prefix inside the bucket/container/file system, without leading or trailing `/`.
    pub prefix: String,
    /// Multipart upload part size in bytes (S3) and parts in flight.
    pub part_size: Option<usize>,
    pub part_concurrency: usize,
    /// The gateways came from a list (`--endpoints` or the URI's hosts), which results record
    /// beside the URI.
    pub gateway_list: bool,
    /// The URI with any password removed, for results and messages.
    pub redacted: String,
}

/// URI schemes served through OpenDAL.
pub(crate) const SCHEMES: &[&str] = &["s3", "swift", "hdfs", "webhdfs", "webdav", "webdavs", "alluxio"];

fn invalid(uri: &str, why: impl std::fmt::Display) -> OpError {
    let uri = crate::redact::redact(uri);
    OpError::new("EINVAL", format!("target '{uri}': {why}"))
}

/// What is wrong with a URI the URL parser refused, and how to write it.
fn url_problem(uri: &str, e: url::ParseError) -> String {
    let scheme = uri.split_once("://").map_or("", |(s, _)| s);
    let example = match scheme {
        "hdfs" => "hdfs://namenode:8020/path",
        "webhdfs" => "webhdfs://namenode:9870/path",
        "webdav" | "webdavs" => "webdav://host:port/path",
        "alluxio" => "alluxio://host:39999/path",
        "swift" => "swift://container/prefix?auth=http://host:8080/auth/v1.0",
        _ => "s3://bucket/prefix?endpoint=http://host:9000",
    };
    format!("{}: write e.g. {example}", url_what(e))
}

/// What the URL parser found wrong, in words.
fn url_what(e: url::ParseError) -> String {
    match e {
        url::ParseError::InvalidPort => "the port is not a number from 1 to 65535".to_string(),
        url::ParseError::EmptyHost => "the host is missing".to_string(),
        url::ParseError::InvalidIpv4Address | url::ParseError::InvalidIpv6Address => {
            "the IP address is not valid".to_string()
        }
        url::ParseError::IdnaError | url::ParseError::InvalidDomainCharacter => {
            "the host name has characters a host name cannot have".to_string()
        }
        url::ParseError::RelativeUrlWithoutBase => "it has no scheme".to_string(),
        other => other.to_string(),
    }
}

/// A sample value for a query option, for the message when it is empty.
fn option_example(key: &str) -> &'static str {
    match key {
        "endpoint" => "http://127.0.0.1:9000",
        "region" => "us-east-1",
        "auth" => "http://host:8080/auth/v1.0",
        "part_size" => "16m",
        "part_concurrency" => "4",
        _ => "1",
    }
}

/// The example of a gateway list in a URI of `scheme`.
fn hosts_example(scheme: &str) -> &'static str {
    if scheme == "swift" {
        "swift://p1:8080,p2:8080/container/prefix"
    } else {
        "s3://h1:9000,h2:9000/bucket/prefix"
    }
}

/// `s3://h1:9000,h2:9000/bucket/prefix?...` written as `s3://bucket/prefix?...` and its host
/// list (the same for `swift://p1:8080,p2:8080/container/...`). A bucket name has neither `:`
/// nor `,`, so an S3 authority with one names gateways; a Swift container may hold a `,` but
/// never stands before a port, so a Swift authority names proxies when it has a `:`.
fn hosts_form(uri: &str) -> Result<(Option<String>, Vec<Gateway>), OpError> {
    let Some((scheme, rest)) = uri.split_once("://").filter(|(s, _)| matches!(*s, "s3" | "swift")) else {
        return Ok((None, Vec::new()));
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let marks: &[char] = if scheme == "s3" { &[':', ','] } else { &[':'] };
    if !authority.contains(marks) {
        return Ok((None, Vec::new()));
    }
    let path = rest[end..].trim_start_matches('/');
    let (bucket, tail) = path.split_at(path.find(['/', '?']).unwrap_or(path.len()));
    let what = if scheme == "s3" { "bucket" } else { "container" };
    if bucket.is_empty() {
        return Err(invalid(
            uri,
            format!("names gateways but no {what}: write {}", hosts_example(scheme)),
        ));
    }
    let hosts = authority
        .split(',')
        .map(|h| {
            bare_gateway(h).map_err(|why| invalid(uri, format!("gateway '{h}' {why}: write {}", hosts_example(scheme))))
        })
        .collect::<Result<_, _>>()?;
    Ok((Some(format!("{scheme}://{bucket}{tail}")), hosts))
}

/// Credentials in a URI (`s3://key:secret@bucket`) are refused: taken for a bucket or a host,
/// or dropped, they would run the benchmark as someone else or against another service. The
/// message shows the URI without them, so the password is never quoted.
fn refuse_userinfo(uri: &str) -> Result<(), OpError> {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return Ok(());
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return Ok(());
    };
    let from = match scheme {
        "s3" => "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile)",
        "swift" => "ST_USER and ST_KEY (or OS_* for Keystone)",
        "webdav" | "webdavs" => "DFSBENCH_WEBDAV_USER and DFSBENCH_WEBDAV_PASSWORD",
        _ => "HADOOP_USER_NAME",
    };
    let without = crate::redact::redact(&format!("{scheme}://{}", &rest[at + 1..]));
    Err(OpError::new(
        "EINVAL",
        format!("credentials do not go in the target URI: set {from} and write {without}"),
    ))
}

/// `host:port` (or a host alone), or why not.
fn bare_gateway(h: &str) -> Result<Gateway, String> {
    let url = Url::parse(&format!("http://{h}")).map_err(|e| format!("is not host:port ({})", url_what(e)))?;
    if h.is_empty()
        || url.host_str().is_none()
        || url.path() != "/"
        || !url.username().is_empty()
        || url.query().is_some()
    {
        return Err("is not host:port".into());
    }
    Ok(Gateway {
        scheme: None,
        authority: h.to_string(),
    })
}

/// One entry of `--endpoints`: `host:port` or `http(s)://host:port`, or why not.
fn listed_gateway(entry: &str) -> Result<Gateway, String> {
    let e = entry.trim().trim_end_matches('/');
    let Some((scheme, rest)) = e.split_once("://") else {
        return bare_gateway(e);
    };
    if !matches!(scheme, "http" | "https") {
        return Err(format!("has the scheme '{scheme}': use http:// or https://"));
    }
    match Url::parse(e) {
        Ok(u) if u.host_str().is_some() && u.path() == "/" && u.username().is_empty() && u.query().is_none() => {
            Ok(Gateway {
                scheme: Some(scheme.to_string()),
                authority: rest.to_string(),
            })
        }
        Ok(_) => Err("has more than a host and port".into()),
        Err(e) => Err(format!("is not a URL ({})", url_what(e))),
    }
}

/// `--endpoints` checked entry by entry.
fn endpoints_option(list: &[String]) -> Result<Vec<Gateway>, OpError> {
    list.iter()
        .map(|entry| {
            listed_gateway(entry).map_err(|why| {
                OpError::new(
                    "EINVAL",
                    format!(
                        "--endpoints entry '{}' {why}: write --endpoints h1:9000,h2:9000 or http://h1:9000,https://h2:443",
                        crate::redact::redact(entry.trim())
                    ),
                )
            })
        })
        .collect()
}

/// A comma-separated `endpoint=`: each one a full URL.
fn endpoint_list(uri: &str, list: &str) -> Result<Vec<String>, OpError> {
    list.split(',')
        .map(|e| {
            let e = e.trim().trim_end_matches('/');
            match Url::parse(e) {
                Ok(u) if !u.username().is_empty() || u.password().is_some() => Err(invalid(
                    uri,
                    "credentials do not go in endpoint=: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY and write endpoint=http://host:9000",
                )),
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(e.to_string()),
                _ => Err(invalid(
                    uri,
                    format!(
                        "endpoint '{e}' is not an http(s) URL: write endpoint=http://host:9000[,http://host2:9000]"
                    ),
                )),
            }
        })
        .collect()
}

/// `--endpoints` given for a target with one way in.
pub(crate) fn refuse_endpoints(uri: &str, scheme: &str) -> OpError {
    let backend = if scheme.is_empty() { "posix" } else { scheme };
    OpError::new(
        "EINVAL",
        format!(
            "--endpoints spreads workers over the gateways of an s3:// or swift:// target; the {backend} target '{}' has one way in: drop --endpoints",
            crate::redact::redact(uri)
        ),
    )
}

fn http_endpoint(url: &Url, tls: bool, uri: &str) -> Result<String, OpError> {
    let host = url
        .host_str()
        .ok_or_else(|| invalid(uri, "needs a host: write scheme://host:port/path"))?;
    let scheme = if tls { "https" } else { "http" };
    Ok(match url.port() {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    })
}

impl Spec {
    /// Host and port of the service's first hop (S3 endpoint, Swift auth URL, NameNode, HTTP
    /// server), for measuring the network round trip to it; None when the URI does not say.
    pub fn endpoint_address(&self) -> Option<(String, u16)> {
        let url = match &self.service {
            Service::S3 { endpoints, .. } => endpoints
                .first()
                .cloned()
                .unwrap_or_else(|| "https://s3.amazonaws.com".into()),
            Service::Swift { auth_url, proxies, .. } => match proxies.first() {
                Some(p) => p.url("http"),
                None => auth_url.clone()?,
            },
            Service::Hdfs { name_node } => name_node.clone(),
            Service::Webhdfs { endpoint } | Service::Webdav { endpoint } | Service::Alluxio { endpoint } => {
                endpoint.clone()
            }
        };
        let url = Url::parse(&url).ok()?;
        let default_port = if url.scheme() == "hdfs" { Some(8020) } else { None };
        Some((
            url.host_str()?.to_string(),
            url.port_or_known_default().or(default_port)?,
        ))
    }

    /// The S3 endpoints workers are spread over (more than one with several gateways); Swift's
    /// proxies become URLs only against the storage URL authentication gives, when it opens.
    pub fn endpoints(&self) -> &[String] {
        match &self.service {
            Service::S3 { endpoints, .. } => endpoints,
            _ => &[],
        }
    }

    pub fn parse(uri: &str) -> Result<Spec, OpError> {
        Self::parse_with_endpoints(uri, &[])
    }

    /// The target `uri` with the gateways of `--endpoints` (none: the URI's own).
    pub fn parse_with_endpoints(uri: &str, endpoints: &[String]) -> Result<Spec, OpError> {
        refuse_userinfo(uri)?;
        let (rewritten, uri_hosts) = hosts_form(uri)?;
        let listed = endpoints_option(endpoints)?;
        let scheme = uri.split_once("://").map_or("", |(s, _)| s);
        if !listed.is_empty() && !matches!(scheme, "s3" | "swift") {
            return Err(refuse_endpoints(uri, scheme));
        }
        if !listed.is_empty() && !uri_hosts.is_empty() {
            let hosts: Vec<&str> = uri_hosts.iter().map(|g| g.authority.as_str()).collect();
            return Err(invalid(
                uri,
                format!(
                    "names its gateways ({}) and so does --endpoints: keep one list (drop --endpoints, or write the target as {scheme}://{})",
                    hosts.join(","),
                    if scheme == "s3" { "bucket/prefix" } else { "container/prefix" }
                ),
            ));
        }
        let gateway_list = !listed.is_empty() || !uri_hosts.is_empty();
        let twice = if listed.is_empty() {
            "the gateways before the bucket and endpoint="
        } else {
            "--endpoints and endpoint="
        };
        let hosts = if listed.is_empty() { uri_hosts } else { listed };
        let url = Url::parse(rewritten.as_deref().unwrap_or(uri)).map_err(|e| invalid(uri, url_problem(uri, e)))?;
        let mut query: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        if let Some(k) = query.iter().find(|(_, v)| v.is_empty()).map(|(k, _)| k) {
            return Err(invalid(
                uri,
                format!(
                    "option '{k}' has no value: give one (e.g. {k}={}) or leave the option out",
                    option_example(k)
                ),
            ));
        }
        let prefix = url.path().trim_matches('/').to_string();
        let uri_hosts_given = rewritten.is_some();
        let host = url.host_str().unwrap_or_default().to_string();
        let mut take = |k: &str| query.remove(k);
        let flag = |v: Option<String>| v.is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"));
        let service = match url.scheme() {
            "s3" => {
                if host.is_empty() {
                    return Err(invalid(uri, "needs a bucket: write s3://bucket/prefix"));
                }
                let tls = flag(take("tls"));
                let given = take("endpoint");
                // The environment's endpoint applies when neither the URI nor --endpoints names one.
                let given = match (hosts.is_empty(), given) {
                    (true, None) => std::env::var("AWS_ENDPOINT_URL").ok(),
                    (_, given) => given,
                };
                let endpoints = match hosts {
                    hosts if !hosts.is_empty() && given.is_some() => {
                        return Err(invalid(uri, format!("names its endpoints twice ({twice}): keep one")));
                    }
                    hosts if !hosts.is_empty() => {
                        let scheme = if tls { "https" } else { "http" };
                        hosts.iter().map(|g| g.url(scheme)).collect()
                    }
                    _ if tls => {
                        return Err(invalid(
                            uri,
                            "tls=1 applies to the gateways of s3://host:port/bucket or --endpoints host:port: with endpoint= write https:// in it",
                        ))
                    }
                    _ => given.map(|e| endpoint_list(uri, &e)).transpose()?.unwrap_or_default(),
                };
                Service::S3 {
                    bucket: host,
                    endpoints,
                    region: take("region"),
                    virtual_host: flag(take("virtual_host")),
                }
            }
            "swift" => {
                if host.is_empty() {
                    return Err(invalid(uri, "needs a container: write swift://container/prefix"));
                }
                Service::Swift {
                    container: host,
                    auth_url: take("auth"),
                    proxies: hosts,
                }
            }
            "hdfs" => {
                let ep = http_endpoint(&url, false, uri)?;
                Service::Hdfs {
                    name_node: ep.replacen("http://", "hdfs://", 1),
                }
            }
            "webhdfs" => Service::Webhdfs {
                endpoint: http_endpoint(&url, flag(take("tls")), uri)?,
            },
            "webdav" | "webdavs" => Service::Webdav {
                endpoint: http_endpoint(&url, url.scheme() == "webdavs", uri)?,
            },
            "alluxio" => Service::Alluxio {
                endpoint: http_endpoint(&url, flag(take("tls")), uri)?,
            },
            other => return Err(invalid(uri, format!("unknown scheme '{other}'"))),
        };
        let part_size = match take("part_size") {
            Some(v) => Some(
                crate::units::parse_size(&v)
                    .ok()
                    .filter(|&n| n >= 5 << 20)
                    .map(|n| n as usize)
                    .ok_or_else(|| invalid(uri, format!("part_size={v}: give a size of at least 5m")))?,
            ),
            None => None,
        };
        let part_concurrency = match take("part_concurrency") {
            Some(v) => v
                .parse()
                .ok()
                .filter(|&n: &usize| n >= 1)
                .ok_or_else(|| invalid(uri, format!("part_concurrency={v}: give a number of at least 1")))?,
            None => 1,
        };
        if let Some(k) = query.keys().next() {
            return Err(invalid(
                uri,
                format!("unknown option '{k}': use endpoint, region, virtual_host, auth, tls, part_size or part_concurrency"),
            ));
        }
        Ok(Spec {
            service,
            prefix,
            part_size,
            part_concurrency,
            gateway_list,
            redacted: crate::redact::redact(if uri_hosts_given { uri } else { url.as_str() }),
        })
    }
}

#[cfg(test)]
mod tests;
