//! A rank that gets garbage from rank 0 says so in one line and exits; it never panics nor
//! hangs. The test plays rank 0 of a `--procs 2` run over the group's socket, speaking the
//! protocol until the point where it sends something wrong.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Target;

const TAG_ROUND: u8 = 1;
const TAG_SYNC: u8 = 3;
const BOUND: Duration = Duration::from_secs(30);

fn send(s: &mut UnixStream, tag: u8, data: &[u8]) {
    let mut f = vec![tag];
    f.extend_from_slice(&(data.len() as u64).to_le_bytes());
    f.extend_from_slice(data);
    s.write_all(&f).unwrap();
}

fn recv(s: &mut UnixStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 9];
    s.read_exact(&mut head).unwrap();
    let mut data = vec![0u8; u64::from_le_bytes(head[1..].try_into().unwrap()) as usize];
    s.read_exact(&mut data).unwrap();
    (head[0], data)
}

/// Rank 1 of a run whose rank 0 is this test, joined: the stream to it, and the process.
/// The group's token this test, as rank 0, hands its child.
const TOKEN: &str = "00112233445566778899aabbccddeeff";

struct FakeRoot {
    stream: UnixStream,
    child: Child,
    _dir: tempfile::TempDir,
}

/// Rank 1 of a run whose rank 0 is this test, connected: it waits for rank 0's go.
fn connect(target: &Target) -> FakeRoot {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("group.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let child = Command::new(common::bin())
        .args([
            "run",
            "-t",
            &target.uri(),
            "-q",
            "-w",
            "files",
            "--files",
            "8",
            "--file-size",
            "1k",
        ])
        .args(["-j", "1", "--rank-timeout", "60s"])
        // rank:size:fanout:token:address, as a --procs parent hands it to its children.
        .env("DFSBENCH_PROCS_CHILD", format!("1:2:8:{TOKEN}:unix:{}", sock.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    stream.set_read_timeout(Some(BOUND)).unwrap();
    let mut hello = [0u8; 24];
    stream.read_exact(&mut hello).unwrap();
    let token: Vec<String> = hello[..16].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(token.concat(), TOKEN, "the child says the group's token first");
    assert_eq!(u64::from_le_bytes(hello[16..].try_into().unwrap()), 1);
    FakeRoot {
        stream,
        child,
        _dir: dir,
    }
}

/// What the binary names its build (`--version` without the program's name), as in its
/// member record.
fn build() -> String {
    let out = Command::new(common::bin()).arg("--version").output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    line.trim()
        .strip_prefix("dfsbench ")
        .expect("dfsbench VERSION")
        .to_string()
}

/// Rank 1 of a run whose rank 0 is this test, joined.
fn join(target: &Target) -> FakeRoot {
    let mut root = connect(target);
    let member = root.sync();
    let me = serde_json::json!({"rank": 0, "host": "fake", "pid": 1, "version": build()});
    send(&mut root.stream, TAG_SYNC, &serde_json::to_vec(&[me, member]).unwrap());
    root
}

impl FakeRoot {
    /// The go, the rank's member record, the clock exchange; the record.
    fn sync(&mut self) -> serde_json::Value {
        send(&mut self.stream, TAG_SYNC, &[]);
        let (_, member) = recv(&mut self.stream);
        let member: serde_json::Value = serde_json::from_slice(&member).unwrap();
        assert_eq!(member["version"], build(), "the member record names its build");
        for _ in 0..16 {
            recv(&mut self.stream);
            send(&mut self.stream, TAG_SYNC, &0.0f64.to_le_bytes());
        }
        member
    }

    /// Answer the rank's next round with `reply`; what the rank sent.
    fn round(&mut self, reply: &[u8]) -> Vec<u8> {
        // Stonewall notices (tag 2) and progress totals (tag 5) come while a phase runs.
        let data = loop {
            match recv(&mut self.stream) {
                (TAG_ROUND, data) => break data,
                (tag, _) => assert!(tag == 2 || tag == 5, "a round, a stonewall notice or progress: {tag}"),
            }
        };
        send(&mut self.stream, TAG_ROUND, reply);
        data
    }

    /// The rank's exit code and stderr; it must exit within [`BOUND`] while this end stays
    /// open (a rank that only notices a closed connection would hang here).
    fn outcome(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + BOUND;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the rank still runs {BOUND:?} after the garbage");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        (status.code(), err)
    }
}

fn one_clear_line(code: Option<i32>, stderr: &str, wanted: &str) {
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains(wanted), "{stderr}");
}

#[test]
fn a_frame_header_claiming_2_62_bytes_ends_the_rank_with_one_line() {
    let target = Target::temp();
    let mut root = join(&target);
    let mut head = vec![TAG_ROUND];
    head.extend_from_slice(&(1u64 << 62).to_le_bytes());
    root.stream.write_all(&head).unwrap();
    let (code, stderr) = root.outcome();
    one_clear_line(
        code,
        &stderr,
        "rank 0 sent a message of 4611686018427387904 bytes, more than the 256 MiB limit",
    );
}

#[test]
fn a_run_id_that_is_a_path_is_refused() {
    let target = Target::temp();
    let mut root = join(&target);
    root.round(b"../../etc");
    let (code, stderr) = root.outcome();
    one_clear_line(
        code,
        &stderr,
        "rank 0 sent the run id \"../../etc\", which is not a run id of this program",
    );
    assert!(target.run_dirs().is_empty());
}

#[test]
fn a_garbage_phase_end_ends_the_rank_with_one_line_naming_both_versions() {
    let target = Target::temp();
    let mut root = join(&target);
    let id = "20261122-013012-4f2a9c";
    let run_dir = target.path().unwrap().join(format!("dfsbench-{id}"));
    root.round(id.as_bytes());
    root.round(b""); // the server processes
    std::fs::create_dir(&run_dir).unwrap();
    std::fs::write(run_dir.join(".dfsbench-run"), format!("dfsbench-{id}")).unwrap();
    root.round(b""); // the run directory is made
    root.round(b""); // every rank opened it
    root.round(b""); // the job's setup
    root.round(b""); // the start of the first phase
    let sent = root.round(b"\x00 not a phase end");
    // To its tree parent a rank sends the length (u32 LE) of the JSON list of the ranks lost
    // below it, that list, and its part.
    let n = u32::from_le_bytes(sent[..4].try_into().unwrap()) as usize;
    let lost: Vec<String> = serde_json::from_slice(&sent[4..4 + n]).expect("a list of lost ranks");
    assert!(lost.is_empty(), "{lost:?}");
    assert!(
        serde_json::from_slice::<serde_json::Value>(&sent[4 + n..]).is_ok(),
        "the rank sent its part"
    );
    let (code, stderr) = root.outcome();
    let version = build();
    one_clear_line(
        code,
        &stderr,
        &format!("rank 0 (dfsbench {version}) sent the end of phase"),
    );
    assert!(
        stderr.contains(&format!("that rank 1 (dfsbench {version}) cannot read")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&run_dir).unwrap();
}

/// Rank 0 refuses the run at join (another rank runs another version): a rank waiting for its
/// go hears why at once, not at --rank-timeout.
#[test]
fn a_refused_join_reaches_a_waiting_rank_at_once() {
    let target = Target::temp();
    let mut root = connect(&target);
    let why = "rank 2 runs dfsbench 9.9.9, rank 0 runs 0.1.0: run the same dfsbench on every rank";
    send(
        &mut root.stream,
        TAG_SYNC,
        format!("dfsbench refused: {why}").as_bytes(),
    );
    let (code, stderr) = root.outcome();
    one_clear_line(code, &stderr, why);
}

/// Rank 0 of another build of the same version (another commit) is named at join, with both
/// builds, in one line: not at --rank-timeout, not as a garbled message later.
#[test]
fn a_root_of_another_build_of_this_version_is_named_at_once() {
    let target = Target::temp();
    let mut root = connect(&target);
    let member = root.sync();
    let other = format!(
        "{} (commit 000000000000, features: io_uring)",
        env!("CARGO_PKG_VERSION")
    );
    assert_ne!(other, build());
    let me = serde_json::json!({"rank": 0, "host": "fake", "pid": 1, "version": other});
    send(&mut root.stream, TAG_SYNC, &serde_json::to_vec(&[me, member]).unwrap());
    let (code, stderr) = root.outcome();
    one_clear_line(
        code,
        &stderr,
        &format!(
            "rank 0 runs dfsbench {other}, rank 1 runs {}: run the same dfsbench on every rank",
            build()
        ),
    );
}

/// A member list without this rank is not from this run, whatever the versions in it.
#[test]
fn a_member_list_without_this_rank_is_named_as_such() {
    let target = Target::temp();
    let mut root = connect(&target);
    root.sync();
    let me = serde_json::json!({"rank": 0, "host": "fake", "pid": 1, "version": build()});
    let other = serde_json::json!({"rank": 5, "host": "fake", "pid": 2, "version": build()});
    send(&mut root.stream, TAG_SYNC, &serde_json::to_vec(&[me, other]).unwrap());
    let (code, stderr) = root.outcome();
    one_clear_line(
        code,
        &stderr,
        "rank 0 sent a list of 2 members without rank 1 for a run of 2",
    );
    assert!(!stderr.contains("runs dfsbench"), "not a version mismatch: {stderr}");
}
