//! Object stores, HDFS and HTTP file services through Apache OpenDAL.
//!
//! Every worker gets its own operator and HTTP connection pool (sized to its queue depth plus
//! one, with keep-alive), built on the worker's thread. Requests are not retried behind
//! dfsbench's back: with `--retries N`, temporary failures are retried here and every retry is
//! counted.

mod beside;
mod client;
mod spec;
mod swift_auth;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::stream::StreamExt;
use opendal::layers::HttpClientLayer;
use opendal::raw::HttpClient;
use opendal::{services, ErrorKind, Operator};

use crate::posix::{RUN_MARKER, RUN_PREFIX};
use crate::storage::{Capabilities, Drive, OpResult, Storage, TargetInfo};
use crate::OpError;

pub(crate) use client::DalClient;
pub(crate) use spec::refuse_endpoints;
pub(crate) use spec::{Gateway, Service, Spec, SCHEMES};

/// How to open a network target.
#[derive(Debug, Clone, Copy, Default)]
pub struct NetOptions {
    /// Create the S3 bucket when it does not exist.
    pub create_bucket: bool,
    /// Retries of temporary failures per operation (0: none).
    pub retries: u32,
    /// How long the set-up and the clean-up of the run's prefix may wait for the service
    /// (`--op-timeout`) [default: [`SETUP_LIMIT`]].
    pub setup_limit: Option<Duration>,
    /// The run's stop flag (Ctrl-C): set-up gives up when it is set (clean-up runs on).
    pub stop: Option<&'static AtomicBool>,
    /// The user named this target in `--overwrite-device`: a block device opens as the run's
    /// one file (posix targets only).
    pub overwrite_device: bool,
}

/// How long set-up and clean-up wait for a service that does not answer, without
/// `--op-timeout`: a listener that accepts and never answers must not hold a run forever.
pub(crate) const SETUP_LIMIT: Duration = Duration::from_secs(60);

/// Bounds of the calls around the measurement: the run's prefix made, checked and removed.
#[derive(Debug, Clone, Copy)]
struct Setup {
    limit: Duration,
    stop: Option<&'static AtomicBool>,
}

impl Setup {
    fn of(opts: NetOptions) -> Setup {
        Setup {
            limit: opts.setup_limit.unwrap_or(SETUP_LIMIT),
            stop: opts.stop,
        }
    }

    /// Run `f` on the shared runtime until it ends, the limit passes (a `timeout` error saying
    /// what was waited for) or the stop flag is set (`interrupted`).
    fn run<T>(self, what: &str, f: impl std::future::Future<Output = Result<T, OpError>>) -> Result<T, OpError> {
        let stopped = async {
            loop {
                if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        crate::runtime::shared().block_on(async {
            tokio::select! {
                r = tokio::time::timeout(self.limit, f) => r.unwrap_or_else(|_| Err(OpError::new(
                    "timeout",
                    format!("no answer within {} while {what} (--op-timeout)", humantime::format_duration(self.limit)),
                ))),
                () = stopped => Err(OpError::new("interrupted", format!("interrupted while {what}"))),
            }
        })
    }
}

/// A read stream's error: OpenDAL's own (a 404 on the first chunk is ENOENT) carried in an
/// io::Error, or a plain I/O error.
pub(super) fn stream_error(e: std::io::Error) -> OpError {
    if e.get_ref().is_some_and(|inner| inner.is::<opendal::Error>()) {
        let inner = e.into_inner().expect("checked above");
        return op_error(*inner.downcast::<opendal::Error>().expect("checked above"));
    }
    OpError::from(e)
}

/// Map an OpenDAL error to the kinds results count by, POSIX names where they mean the same.
pub(super) fn op_error(e: opendal::Error) -> OpError {
    let kind = match e.kind() {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::AlreadyExists => "EEXIST",
        ErrorKind::IsADirectory => "EISDIR",
        ErrorKind::NotADirectory => "ENOTDIR",
        ErrorKind::RateLimited => "rate_limited",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::ConfigInvalid => "config_invalid",
        ErrorKind::ConditionNotMatch => "condition_not_match",
        ErrorKind::RangeNotSatisfied => "range_not_satisfied",
        _ => "unexpected",
    };
    // The causes below the first (TLS alerts, refused connections) say what really happened.
    let mut message = e.to_string();
    let mut cause = std::error::Error::source(&e).and_then(|s| s.source());
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    OpError::new(kind, message)
}

/// Credentials resolved once at open (Swift needs a token).
#[derive(Clone)]
enum Auth {
    None,
    /// The storage URL once per proxy (one: the URL authentication gave).
    Swift {
        storage_urls: Vec<String>,
        token: String,
    },
}

/// A network target opened at the run prefix of one run.
pub struct DalStorage {
    spec: Spec,
    auth: Auth,
    /// The base URLs workers spread over (S3 gateways, Swift proxies); empty with one way in.
    gateways: Vec<String>,
    run_name: String,
    caps: Capabilities,
    retries: u32,
    setup: Setup,
    /// A job reaches beside the run directory (a kept dataset, through [`Storage::beside`]):
    /// clients made from then on also get an operator of the prefix that holds it.
    reaches_beside: AtomicBool,
}

fn http_client(pool: usize) -> Result<reqwest::Client, OpError> {
    reqwest::Client::builder()
        // One idle connection more than requests in flight: hyper hands a connection back to
        // the pool from a task on the runtime's threads, and a worker whose next request comes
        // before that task ran would open a new connection (and the full pool close one) for
        // about 1 request in 8 to 15, measuring a TCP connect in that request.
        .pool_max_idle_per_host(pool.max(1) + 1)
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        // A benchmark must talk to the target itself, never to a proxy from the environment.
        .no_proxy()
        .build()
        .map_err(|e| OpError::new("config_invalid", format!("cannot build the HTTP client: {e}")))
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

impl DalStorage {
    /// Build an operator rooted at `root` (relative to the bucket, container or file system),
    /// talking to gateway `gateway` of several (S3 endpoints, Swift proxies; 0 otherwise).
    fn operator(&self, root: &str, pool: usize, gateway: usize) -> Result<Operator, OpError> {
        let root = format!("/{root}/");
        let root = root.replace("//", "/");
        let op = match (&self.spec.service, &self.auth) {
            (
                Service::S3 {
                    bucket,
                    endpoints,
                    region,
                    virtual_host,
                },
                _,
            ) => {
                let mut b = services::S3::default()
                    .bucket(bucket)
                    .root(&root)
                    .region(
                        region
                            .as_deref()
                            .or(std::env::var("AWS_REGION").ok().as_deref())
                            .unwrap_or("us-east-1"),
                    )
                    // Never probe the EC2 metadata service: no traffic leaves for addresses the
                    // user did not name.
                    .disable_ec2_metadata();
                if !endpoints.is_empty() {
                    b = b.endpoint(&endpoints[gateway % endpoints.len()]);
                }
                if *virtual_host {
                    b = b.enable_virtual_host_style();
                }
                Operator::new(b).map(|o| o.finish())
            }
            (Service::Swift { container, .. }, Auth::Swift { storage_urls, token }) => Operator::new(
                services::Swift::default()
                    .endpoint(&storage_urls[gateway % storage_urls.len()])
                    .container(container)
                    .root(&root)
                    .token(token),
            )
            .map(|o| o.finish()),
            (Service::Swift { .. }, Auth::None) => unreachable!("swift targets authenticate at open"),
            (Service::Hdfs { name_node }, _) => {
                Operator::new(services::HdfsNative::default().name_node(name_node).root(&root)).map(|o| o.finish())
            }
            (Service::Webhdfs { endpoint }, _) => {
                let mut b = services::Webhdfs::default().endpoint(endpoint).root(&root);
                if let Ok(user) = std::env::var("HADOOP_USER_NAME") {
                    b = b.user_name(&user);
                }
                Operator::new(b).map(|o| o.finish())
            }
            (Service::Webdav { endpoint }, _) => {
                let mut b = services::Webdav::default().endpoint(endpoint).root(&root);
                if let (Ok(u), Ok(p)) = (
                    std::env::var("DFSBENCH_WEBDAV_USER"),
                    std::env::var("DFSBENCH_WEBDAV_PASSWORD"),
                ) {
                    b = b.username(&u).password(&p);
                }
                Operator::new(b).map(|o| o.finish())
            }
            (Service::Alluxio { endpoint }, _) => {
                Operator::new(services::Alluxio::default().endpoint(endpoint).root(&root)).map(|o| o.finish())
            }
        }
        .map_err(|e| {
            let e = op_error(e);
            crate::error::keep_detail(&e.message);
            OpError::new(
                e.kind,
                format!(
                    "{}: the client cannot be set up ({}): check the target's options",
                    self.spec.redacted,
                    crate::error::short_cause(&e.message)
                ),
            )
        })?;
        if matches!(self.spec.service, Service::Hdfs { .. }) {
            return Ok(op);
        }
        Ok(op.layer(HttpClientLayer::new(HttpClient::with(http_client(pool)?))))
    }

    /// Open `spec`, check the service answers, and create this run's prefix with its marker;
    /// with `join`, open the prefix another process of the same run created instead.
    pub fn create_run(spec: Spec, run_name: &str, opts: NetOptions, join: bool) -> Result<Self, OpError> {
        let (mut storage, admin) = Self::connect(spec, run_name, opts)?;
        let cap = admin.info().full_capability();
        let real_dirs = storage.real_dirs();
        storage.caps = Capabilities {
            directories: real_dirs,
            rename: cap.rename,
            append: cap.write_can_append,
            ranged_read: cap.read,
            positional_write: false,
            fsync: false,
            direct_io: false,
            page_cache: false,
            drive: match storage.spec.service {
                Service::Hdfs { .. } => Drive::Shared,
                _ => Drive::PerThread,
            },
        };
        let what = storage.spec.redacted.clone();
        storage
            .setup
            .run(&format!("creating the run prefix on {what}"), async {
                let run_dir = format!("{run_name}/");
                let exists = match admin.stat(&run_dir).await {
                    Ok(_) => true,
                    Err(e) if e.kind() == ErrorKind::NotFound => false,
                    Err(e) => {
                        let e = op_error(e);
                        if opts.create_bucket && e.message.contains("NoSuchBucket") {
                            storage.create_bucket().await?;
                            false
                        } else {
                            return Err(explain(e, &what));
                        }
                    }
                };
                if join {
                    let marker = admin.read(&format!("{run_dir}{RUN_MARKER}")).await;
                    return match marker {
                        Ok(m) if String::from_utf8_lossy(&m.to_vec()).trim() == run_name => Ok(()),
                        _ => Err(OpError::new(
                            "ENOENT",
                            format!(
                            "{what}: the run prefix {run_dir} is not visible here: every process needs the same target"
                        ),
                        )),
                    };
                }
                if exists {
                    return Err(OpError::new(
                        "EEXIST",
                        format!("{what}: the run prefix {run_dir} already exists"),
                    ));
                }
                if real_dirs {
                    admin
                        .create_dir(&run_dir)
                        .await
                        .map_err(|e| explain(op_error(e), &what))?;
                }
                admin
                    .write(&format!("{run_dir}{RUN_MARKER}"), format!("{run_name}\n"))
                    .await
                    .map_err(|e| explain(op_error(e), &what))?;
                Ok(())
            })?;
        Ok(storage)
    }

    /// Authenticate (Swift) and open the operator of the target's prefix.
    fn connect(spec: Spec, run_name: &str, opts: NetOptions) -> Result<(Self, Operator), OpError> {
        let (auth, gateways) = match &spec.service {
            Service::Swift { auth_url, proxies, .. } => {
                let client = http_client(1)?;
                let s = Setup::of(opts).run(
                    "authenticating with Swift",
                    swift_auth::authenticate(&client, auth_url.as_deref()),
                )?;
                let through = swift_auth::through_proxies(&s.storage_url, proxies)?;
                let (gateways, mut storage_urls): (Vec<String>, Vec<String>) = through.into_iter().unzip();
                if storage_urls.is_empty() {
                    storage_urls.push(s.storage_url);
                }
                let auth = Auth::Swift {
                    storage_urls,
                    token: s.token,
                };
                (auth, gateways)
            }
            _ => (Auth::None, spec.endpoints().to_vec()),
        };
        let storage = DalStorage {
            spec,
            auth,
            gateways,
            run_name: run_name.to_string(),
            caps: Capabilities::default(),
            retries: opts.retries,
            setup: Setup::of(opts),
            reaches_beside: Default::default(),
        };
        let admin = storage.operator(&storage.spec.prefix, 4, 0)?;
        Ok((storage, admin))
    }

    /// Services with directories of their own, which a run creates before its marker.
    fn real_dirs(&self) -> bool {
        matches!(
            self.spec.service,
            Service::Hdfs { .. } | Service::Webhdfs { .. } | Service::Webdav { .. } | Service::Alluxio { .. }
        )
    }

    /// `dfsbench clean`: remove the run `run_name` under `spec`'s prefix, only if its marker
    /// names it; the number of files (objects) it held, the marker included.
    pub fn clean_run(spec: Spec, run_name: &str) -> Result<u64, OpError> {
        let (storage, admin) = Self::connect(spec, run_name, NetOptions::default())?;
        let what = storage.spec.redacted.clone();
        let run_dir = format!("{run_name}/");
        let files = storage.setup.run(&format!("listing {run_dir} on {what}"), async {
            match admin.read(&format!("{run_dir}{RUN_MARKER}")).await {
                Ok(m) if String::from_utf8_lossy(&m.to_vec()).trim() == run_name => {}
                Ok(_) => return Err(refuse_clean(&what, "its marker file names another run")),
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(refuse_clean(&what, "it has no .dfsbench-run marker"))
                }
                Err(e) => return Err(explain(op_error(e), &what)),
            }
            count_files(&admin, &run_dir)
                .await
                .map_err(|e| explain(op_error(e), &what))
        })?;
        storage.remove_run()?;
        Ok(files)
    }

    /// Create the bucket with a signed CreateBucket request (OpenDAL has no such call).
    async fn create_bucket(&self) -> Result<(), OpError> {
        let Service::S3 {
            bucket,
            endpoints,
            region,
            ..
        } = &self.spec.service
        else {
            return Ok(());
        };
        let endpoint = endpoints
            .first()
            .cloned()
            .unwrap_or_else(|| "https://s3.amazonaws.com".into());
        let region = region
            .clone()
            .or(std::env::var("AWS_REGION").ok())
            .unwrap_or_else(|| "us-east-1".into());
        let client = http_client(1)?;
        let mut config = reqsign::AwsConfig::default().from_profile().from_env();
        config.ec2_metadata_disabled = true;
        let cred = reqsign::AwsDefaultLoader::new(client.clone(), config)
            .load()
            .await
            .map_err(|e| OpError::new("auth", format!("cannot load S3 credentials: {e}")))?
            .ok_or_else(|| {
                OpError::new(
                    "auth",
                    "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                )
            })?;
        let url = format!("{}/{bucket}", endpoint.trim_end_matches('/'));
        let mut req = client
            .put(&url)
            .header("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
            .build()
            .map_err(|e| OpError::new("EINVAL", format!("bad bucket URL {url}: {e}")))?;
        reqsign::AwsV4Signer::new("s3", &region)
            .sign(&mut req, &cred)
            .map_err(|e| OpError::new("auth", format!("cannot sign CreateBucket: {e}")))?;
        let resp = client
            .execute(req)
            .await
            .map_err(|e| OpError::new("unexpected", format!("CreateBucket {bucket}: {e}")))?;
        if !resp.status().is_success() {
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            return Err(OpError::new(
                "unexpected",
                format!("CreateBucket {bucket} answered {status}: {body}"),
            ));
        }
        Ok(())
    }
}

/// Turn the errors a user meets at start into one actionable line.
fn explain(e: OpError, what: &str) -> OpError {
    let m = &e.message;
    let hint = if m.contains("NoSuchBucket") {
        "the bucket does not exist: create it or add --create-bucket"
    } else if m.contains("InvalidAccessKeyId") || m.contains("SignatureDoesNotMatch") || e.kind == "EACCES" {
        "access denied: check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ST_*/OS_* variables)"
    } else if [
        "certificate",
        "tls",
        "TLS",
        "InvalidContentType",
        "corrupt message",
        "HandshakeFailure",
    ]
    .iter()
    .any(|t| m.contains(t))
    {
        "TLS handshake failed: check http:// vs https:// in the endpoint and the server's certificate"
    } else if m.contains("onnection refused") || m.contains("error sending request") || m.contains("dns error") {
        "cannot connect: check the endpoint host and port, and that the server runs"
    } else if e.kind == "ENOENT" {
        "not found: check the container, bucket or path"
    } else {
        "the service answered with an error"
    };
    crate::error::keep_detail(m);
    OpError::new(e.kind, format!("{what}: {hint} ({})", crate::error::short_cause(m)))
}

impl Storage for DalStorage {
    type Client = DalClient;

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn info(&self) -> TargetInfo {
        let mut details = BTreeMap::new();
        if let Some(p) = self.spec.part_size {
            details.insert("part_size".into(), p.to_string());
        }
        details.insert("part_concurrency".into(), self.spec.part_concurrency.to_string());
        details.insert("retries".into(), self.retries.to_string());
        if self.gateways.len() > 1 || (self.spec.gateway_list && !self.gateways.is_empty()) {
            details.insert("endpoints".into(), self.gateways.join(","));
        }
        TargetInfo {
            uri: self.spec.redacted.clone(),
            backend: self.spec.service.backend().into(),
            run_path: join(&self.spec.prefix, &self.run_name),
            capabilities: self.caps,
            details,
        }
    }

    fn endpoints(&self) -> Vec<String> {
        self.gateways.clone()
    }

    fn client(&self, worker: usize, queue_depth: usize) -> OpResult<DalClient> {
        let beside = self.reaches_beside.load(Ordering::Relaxed);
        Ok(DalClient {
            op: self.operator(&join(&self.spec.prefix, &self.run_name), queue_depth, worker)?,
            beside: match beside {
                true => Some(self.operator(&self.spec.prefix, queue_depth, worker)?),
                false => None,
            },
            part_size: self.spec.part_size,
            part_concurrency: self.spec.part_concurrency,
            retries: self.retries,
            retried: 0,
        })
    }

    fn beside(&self) -> Option<Box<dyn crate::Beside + '_>> {
        // Made like the run's own operators, which the run then fails to make as well.
        let op = self.operator(&self.spec.prefix, 4, 0).ok()?;
        self.reaches_beside.store(true, Ordering::Relaxed);
        Some(Box::new(beside::DalBeside { storage: self, op }))
    }

    fn remove_run(&self) -> OpResult<()> {
        let admin = self.operator(&self.spec.prefix, 4, 0)?;
        let run_dir = format!("{}/", self.run_name);
        let what = format!(
            "removing {run_dir} from {} (what is left there: `dfsbench clean`)",
            self.spec.redacted
        );
        // Bounded in time only: a run stopped by Ctrl-C still removes what it made.
        let clean_up = Setup {
            stop: None,
            ..self.setup
        };
        clean_up.run(&what, async {
            let marker = admin.read(&format!("{run_dir}{RUN_MARKER}")).await.map_err(|e| {
                OpError::new(
                    "refused",
                    format!("refusing to remove {run_dir}: its marker is unreadable ({e})"),
                )
            })?;
            if String::from_utf8_lossy(&marker.to_vec()).trim() != self.run_name
                || !self.run_name.starts_with(RUN_PREFIX)
            {
                return Err(OpError::new(
                    "refused",
                    format!("refusing to remove {run_dir}: its marker names another run"),
                ));
            }
            if matches!(self.spec.service, Service::Alluxio { .. }) {
                return remove_deepest_first(&admin, &run_dir).await.map_err(op_error);
            }
            admin.remove_all(&run_dir).await.map_err(op_error)
        })
    }
}

/// Why `dfsbench clean` leaves a prefix alone.
fn refuse_clean(what: &str, why: &str) -> OpError {
    OpError::new(
        "refused",
        format!("refusing to remove {what}: {why}; dfsbench only removes run directories it created"),
    )
}

/// Entries under `dir` but `dir` itself, counted page by page: a listing of millions of keys
/// is never held whole.
pub(super) async fn count_entries(op: &Operator, dir: &str) -> opendal::Result<u64> {
    let mut lister = op.lister(dir).await?;
    let mut n = 0;
    while let Some(e) = lister.next().await {
        n += u64::from(e?.path() != dir);
    }
    Ok(n)
}

/// Files under `dir` at any depth, counted page by page.
async fn count_files(op: &Operator, dir: &str) -> opendal::Result<u64> {
    let mut lister = op.lister_with(dir).recursive(true).await?;
    let mut n = 0;
    while let Some(e) = lister.next().await {
        n += u64::from(!e?.metadata().is_dir());
    }
    Ok(n)
}

/// `remove_all` for a service that deletes a directory only when it is empty: Alluxio's REST
/// proxy (OpenDAL sends its delete without `recursive`, and its recursive listing does not
/// yield what a directory holds before the directory). Walks the tree one listing at a time,
/// deletes the files, then the directories, the deepest first, `dir` last.
async fn remove_deepest_first(op: &Operator, dir: &str) -> opendal::Result<()> {
    let mut todo = vec![dir.to_string()];
    let mut dirs = Vec::new();
    while let Some(d) = todo.pop() {
        for e in op.list(&d).await? {
            let p = e.path();
            if p == d {
                continue;
            }
            if e.metadata().is_dir() {
                todo.push(p.to_string());
            } else {
                op.delete(p).await?;
            }
        }
        dirs.push(d);
    }
    // A directory is pushed after its parent: in reverse, every one comes before its parent.
    for d in dirs.iter().rev() {
        op.delete(d).await?;
    }
    Ok(())
}
