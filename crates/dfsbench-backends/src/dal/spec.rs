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
    /// `swift://container/prefix?auth=http://host:8080/auth/v1.0` (tempauth) or Keystone via OS_*.
    Swift {
        container: String,
        auth_url: Option<String>,
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

/// A parsed network target: the service and the prefix inside it under which runs live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub service: Service,
    /// Path prefix inside the bucket/container/file system, without leading or trailing `/`.
    pub prefix: String,
    /// Multipart upload part size in bytes (S3) and parts in flight.
    pub part_size: Option<usize>,
    pub part_concurrency: usize,
    /// The URI with any password removed, for results and messages.
    pub redacted: String,
}

/// URI schemes served through OpenDAL.
pub const SCHEMES: &[&str] = &["s3", "swift", "hdfs", "webhdfs", "webdav", "webdavs", "alluxio"];

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
    let what = match e {
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
    };
    format!("{what}: write e.g. {example}")
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

/// `s3://h1:9000,h2:9000/bucket/prefix?...` written as `s3://bucket/prefix?...` and its host
/// list. A bucket name has neither `:` nor `,`, so an authority with one names gateways.
fn hosts_form(uri: &str) -> Result<(Option<String>, Option<String>), OpError> {
    let Some(rest) = uri.strip_prefix("s3://") else {
        return Ok((None, None));
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    // `key:SECRET@bucket` is the bucket with credentials (refused later, and masked), not gateways.
    if !authority.contains([':', ',']) || authority.contains('@') {
        return Ok((None, None));
    }
    let path = rest[end..].trim_start_matches('/');
    let (bucket, tail) = path.split_at(path.find(['/', '?']).unwrap_or(path.len()));
    if bucket.is_empty() {
        return Err(invalid(
            uri,
            "names gateways but no bucket: write s3://h1:9000,h2:9000/bucket/prefix",
        ));
    }
    let mut hosts = Vec::new();
    for h in authority.split(',') {
        let url = Url::parse(&format!("http://{h}"))
            .map_err(|e| invalid(uri, format!("gateway '{h}': {}", url_problem("s3://", e))))?;
        if h.is_empty() || url.host_str().is_none() || url.path() != "/" || !url.username().is_empty() {
            return Err(invalid(
                uri,
                format!("gateway '{h}' is not host:port: write s3://h1:9000,h2:9000/bucket/prefix"),
            ));
        }
        hosts.push(h.to_string());
    }
    Ok((Some(format!("s3://{bucket}{tail}")), Some(hosts.join(","))))
}

/// A comma-separated `endpoint=`: each one a full URL.
fn endpoint_list(uri: &str, list: &str) -> Result<Vec<String>, OpError> {
    list.split(',')
        .map(|e| {
            let e = e.trim().trim_end_matches('/');
            match Url::parse(e) {
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
            Service::Swift { auth_url, .. } => auth_url.clone()?,
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

    /// The endpoints workers are spread over (more than one only for S3 with several gateways).
    pub fn endpoints(&self) -> &[String] {
        match &self.service {
            Service::S3 { endpoints, .. } => endpoints,
            _ => &[],
        }
    }

    pub fn parse(uri: &str) -> Result<Spec, OpError> {
        let (rewritten, hosts) = hosts_form(uri)?;
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
        let hosts_given = hosts.is_some();
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
                // The environment's endpoint applies when the URI names none.
                let given = match (&hosts, given) {
                    (None, None) => std::env::var("AWS_ENDPOINT_URL").ok(),
                    (_, given) => given,
                };
                let endpoints = match hosts {
                    Some(hosts) if given.is_some() => {
                        return Err(invalid(
                            uri,
                            format!("names its endpoints twice ({hosts} and endpoint=): keep one"),
                        ))
                    }
                    Some(hosts) => {
                        let scheme = if tls { "https" } else { "http" };
                        hosts.split(',').map(|h| format!("{scheme}://{h}")).collect()
                    }
                    None if tls => {
                        return Err(invalid(
                            uri,
                            "tls=1 applies to s3://host:port/bucket: with endpoint= write https:// in it",
                        ))
                    }
                    None => given.map(|e| endpoint_list(uri, &e)).transpose()?.unwrap_or_default(),
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
            redacted: crate::redact::redact(if hosts_given { uri } else { url.as_str() }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_uris_say_what_to_write() {
        let e = |uri: &str| Spec::parse(uri).unwrap_err().message;
        let m = e("hdfs://127.0.0.1:99999/x");
        assert!(
            m.contains("port is not a number from 1 to 65535") && m.contains("hdfs://namenode:8020"),
            "{m}"
        );
        let m = e("s3://b/x?region=");
        assert!(
            m.contains("option 'region' has no value") && m.contains("region=us-east-1"),
            "{m}"
        );
        let m = e("webdav://[::1/x");
        assert!(m.contains("IP address") && m.contains("webdav://host:port/path"), "{m}");
    }

    #[test]
    fn parses_s3() {
        let s = Spec::parse("s3://bench/runs/a?endpoint=http://127.0.0.1:9000&region=eu-west-1&part_size=8m").unwrap();
        assert_eq!(s.endpoint_address(), Some(("127.0.0.1".into(), 9000)));
        let h = Spec::parse("hdfs://nn.example/data").unwrap();
        assert_eq!(h.endpoint_address(), Some(("nn.example".into(), 8020)));
        assert_eq!(
            s.service,
            Service::S3 {
                bucket: "bench".into(),
                endpoints: vec!["http://127.0.0.1:9000".into()],
                region: Some("eu-west-1".into()),
                virtual_host: false
            }
        );
        assert_eq!(s.prefix, "runs/a");
        assert_eq!(s.part_size, Some(8 << 20));
    }

    #[test]
    fn parses_several_s3_gateways() {
        let s = Spec::parse("s3://10.0.0.1:9000,10.0.0.2:9000/bench/runs?region=eu").unwrap();
        assert_eq!(s.endpoints(), ["http://10.0.0.1:9000", "http://10.0.0.2:9000"]);
        assert_eq!(s.prefix, "runs");
        assert!(matches!(&s.service, Service::S3 { bucket, .. } if bucket == "bench"));
        let s = Spec::parse("s3://gw:443/bench?tls=1").unwrap();
        assert_eq!(s.endpoints(), ["https://gw:443"]);
        let s = Spec::parse("s3://bench/p?endpoint=http://a:9000,http://b:9000/").unwrap();
        assert_eq!(s.endpoints(), ["http://a:9000", "http://b:9000"]);
        let e = |uri: &str| Spec::parse(uri).unwrap_err().message;
        assert!(
            e("s3://a:9000,b:9000").contains("no bucket"),
            "{}",
            e("s3://a:9000,b:9000")
        );
        assert!(e("s3://a:9000,/b").contains("gateway ''"), "{}", e("s3://a:9000,/b"));
        assert!(e("s3://a:99999/b").contains("port"), "{}", e("s3://a:99999/b"));
        assert!(e("s3://b/p?endpoint=a:9000").contains("not an http(s) URL"));
        assert!(e("s3://a:1/b?endpoint=http://c:2").contains("twice"));
        // Credentials before a bucket are not a gateway list.
        let s = Spec::parse("s3://key:secret@bucket/p").unwrap();
        assert!(matches!(&s.service, Service::S3 { bucket, .. } if bucket == "bucket"));
        assert!(!s.redacted.contains("secret"), "{}", s.redacted);
    }

    #[test]
    fn parses_the_others() {
        assert_eq!(
            Spec::parse("hdfs://127.0.0.1:8020/bench").unwrap().service,
            Service::Hdfs {
                name_node: "hdfs://127.0.0.1:8020".into()
            }
        );
        assert_eq!(
            Spec::parse("webdavs://dav.example:443/x").unwrap().service,
            Service::Webdav {
                endpoint: "https://dav.example:443".into()
            }
        );
        let s = Spec::parse("swift://c/p?auth=http://127.0.0.1:8080/auth/v1.0").unwrap();
        assert_eq!(s.prefix, "p");
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        assert!(Spec::parse("s3:///nobucket")
            .unwrap_err()
            .message
            .contains("needs a bucket"));
        assert!(Spec::parse("s3://b?colour=red")
            .unwrap_err()
            .message
            .contains("unknown option 'colour'"));
        assert!(Spec::parse("s3://b?part_size=1k")
            .unwrap_err()
            .message
            .contains("at least 5m"));
        let s = Spec::parse("webdav://u:secret@127.0.0.1:8080/x").unwrap();
        assert!(!s.redacted.contains("secret"), "{}", s.redacted);
    }
}
