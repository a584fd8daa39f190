//! Tests of target URI parsing: schemes, gateways, options and refused credentials.

use super::*;

#[test]
fn credentials_in_uris_are_refused_without_quoting_them() {
    let e = |uri: &str| Spec::parse(uri).unwrap_err().message;
    let m = e("s3://user:pw@127.0.0.1:9/bkt");
    assert!(
        m.contains("AWS_ACCESS_KEY_ID") && m.ends_with("write s3://127.0.0.1:9/bkt"),
        "{m}"
    );
    let m = e("s3://KEY:Hunter2@bkt/p?endpoint=http://h:9000");
    assert!(m.ends_with("write s3://bkt/p?endpoint=http://h:9000"), "{m}");
    let m = e("webdav://u:Hunter2@host/x");
    assert!(
        m.contains("DFSBENCH_WEBDAV_PASSWORD") && m.ends_with("webdav://host/x"),
        "{m}"
    );
    for m in [m, e("s3://KEY:Hunter2@bkt")] {
        assert!(!m.contains("Hunter2") && !m.contains("KEY:"), "{m}");
    }
    let m = e("s3://bkt?endpoint=http://u:Hunter2@h:9000");
    assert!(
        m.contains("credentials do not go in endpoint=") && !m.contains("Hunter2"),
        "{m}"
    );
    // An `@` after the authority is no credential.
    assert!(Spec::parse("s3://bkt/a@b").is_ok());
}

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
}

#[test]
fn endpoints_option_gives_the_gateways() {
    let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Spec::parse_with_endpoints("s3://bench/runs", &list(&["10.0.0.1:9000", "https://gw2:443/"])).unwrap();
    assert_eq!(s.endpoints(), ["http://10.0.0.1:9000", "https://gw2:443"]);
    assert!(s.gateway_list);
    // The same as the list in the URI.
    let from_uri = Spec::parse("s3://10.0.0.1:9000,gw2:443/bench/runs").unwrap();
    let from_flag = Spec::parse_with_endpoints("s3://bench/runs", &list(&["10.0.0.1:9000", "gw2:443"])).unwrap();
    assert_eq!(
        (from_flag.service, from_flag.prefix),
        (from_uri.service, from_uri.prefix)
    );
    let s = Spec::parse_with_endpoints("s3://bench?tls=1", &list(&["gw1:443", "gw2:443"])).unwrap();
    assert_eq!(s.endpoints(), ["https://gw1:443", "https://gw2:443"]);
    let s = Spec::parse_with_endpoints(
        "swift://c/p?auth=http://a:8080/auth/v1.0",
        &list(&["p1:8080", "https://p2"]),
    )
    .unwrap();
    let Service::Swift { proxies, auth_url, .. } = &s.service else {
        panic!("{s:?}")
    };
    assert_eq!(auth_url.as_deref(), Some("http://a:8080/auth/v1.0"));
    assert_eq!(
        proxies.iter().map(|p| p.url("http")).collect::<Vec<_>>(),
        ["http://p1:8080", "https://p2"]
    );
    assert_eq!(s.endpoint_address(), Some(("p1".into(), 8080)));
}

#[test]
fn several_swift_proxies_in_the_uri() {
    let s = Spec::parse("swift://10.0.0.1:8080,10.0.0.2:8080/bench/runs?auth=http://10.0.0.1:8080/auth/v1.0").unwrap();
    let Service::Swift { container, proxies, .. } = &s.service else {
        panic!("{s:?}")
    };
    assert_eq!(container, "bench");
    assert_eq!(s.prefix, "runs");
    let hosts: Vec<&str> = proxies.iter().map(|p| p.authority.as_str()).collect();
    assert_eq!(hosts, ["10.0.0.1:8080", "10.0.0.2:8080"]);
    assert!(
        s.redacted.starts_with("swift://10.0.0.1:8080,10.0.0.2:8080/bench"),
        "{}",
        s.redacted
    );
    // A container may hold a comma; only a port makes the authority a list of proxies.
    let s = Spec::parse("swift://a,b/p").unwrap();
    assert!(
        matches!(&s.service, Service::Swift { container, proxies, .. } if container == "a,b" && proxies.is_empty())
    );
    let e = Spec::parse("swift://p1:8080,p2:8080").unwrap_err().message;
    assert!(
        e.contains("no container") && e.contains("swift://p1:8080,p2:8080/container/prefix"),
        "{e}"
    );
}

#[test]
fn endpoints_option_refusals_say_how_to_fix() {
    let e = |uri: &str, l: &[&str]| {
        let list: Vec<String> = l.iter().map(|s| s.to_string()).collect();
        Spec::parse_with_endpoints(uri, &list).unwrap_err().message
    };
    let m = e("s3://h1:9000,h2:9000/b", &["h3:9000"]);
    assert!(
        m.contains("names its gateways (h1:9000,h2:9000) and so does --endpoints") && m.contains("drop --endpoints"),
        "{m}"
    );
    let m = e("swift://p1:8080/c", &["p2:8080"]);
    assert!(
        m.contains("so does --endpoints") && m.contains("swift://container/prefix"),
        "{m}"
    );
    let m = e("s3://b?endpoint=http://h1:9000", &["h2:9000"]);
    assert!(m.contains("twice (--endpoints and endpoint=): keep one"), "{m}");
    let m = e("hdfs://nn:8020/x", &["h2:9000"]);
    assert!(
        m.contains("the hdfs target 'hdfs://nn:8020/x' has one way in: drop --endpoints"),
        "{m}"
    );
    let m = e("s3://b", &["h1:9000", ""]);
    assert!(
        m.contains("--endpoints entry '' is not host:port (the host is missing)")
            && m.contains("write --endpoints h1:9000,h2:9000"),
        "{m}"
    );
    let m = e("s3://b", &["h1:99999"]);
    assert!(
        m.contains("'h1:99999' is not host:port (the port is not a number"),
        "{m}"
    );
    let m = e("s3://b", &["ftp://h1:21"]);
    assert!(m.contains("has the scheme 'ftp': use http:// or https://"), "{m}");
    let m = e("s3://b", &["http://h1:9000/bucket"]);
    assert!(
        m.contains("'http://h1:9000/bucket' has more than a host and port"),
        "{m}"
    );
    let m = e("s3://b", &["http://u:secret@h1:9000"]);
    assert!(m.contains("more than a host and port") && !m.contains("secret"), "{m}");
    for m in [e("s3://b", &["h1:9000/x"]), e("s3://b", &["h1:9000?a=1"])] {
        assert!(m.contains("is not host:port"), "{m}");
    }
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
}
