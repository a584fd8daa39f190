//! Tests of the rank group: versions and envelopes between ranks, the clock, the merge tree's
//! waits and where shuffled reads come from.

use super::join::{member_record, refused};
use super::*;

fn group(hosts: &[&str]) -> Group {
    let mut g = Group::solo();
    g.size = hosts.len();
    g.members = hosts
        .iter()
        .enumerate()
        .map(|(rank, h)| Member {
            rank,
            host: h.to_string(),
            pid: 1,
            version: build().into(),
            clock_rtt_s: None,
        })
        .collect();
    g
}

#[test]
fn a_garbled_message_names_both_versions() {
    let mut g = group(&["a", "b"]);
    g.members[1].version = "0.0.9".into();
    let e = g
        .decode::<Member>(1, "its part of phase 'write'", b"\x00garbage")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("rank 1 (dfsbench 0.0.9) sent its part of phase 'write' that rank 0")
            && e.contains(&format!("(dfsbench {}) cannot read", build()))
            && e.ends_with("run the same dfsbench on every rank"),
        "{e}"
    );
    g.members[1].version.clear();
    let e = g.decode::<Member>(1, "x", b"[]").unwrap_err().to_string();
    assert!(e.contains("dfsbench an unknown version"), "{e}");
}

/// Messages rank 0 sent: (to, tag, bytes).
type Sent = std::rc::Rc<std::cell::RefCell<Vec<(usize, u8, Vec<u8>)>>>;

/// Rank 0 of a run of `size` whose rank 1 answers with `record`.
struct ScriptedRoot {
    size: usize,
    record: Vec<u8>,
    sent: Sent,
}

impl Transport for ScriptedRoot {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        self.size
    }
    fn kind(&self) -> &'static str {
        "procs"
    }
    fn send(&mut self, to: usize, tag: u8, data: &[u8]) -> Result<(), String> {
        self.sent.borrow_mut().push((to, tag, data.to_vec()));
        Ok(())
    }
    fn recv(&mut self, from: usize, _tag: u8, _deadline: Instant) -> Result<Vec<u8>, RecvError> {
        assert_eq!(from, 1, "rank 0 stops at rank 1's record");
        Ok(self.record.clone())
    }
    fn abort(&mut self, code: i32) -> ! {
        panic!("abort {code}")
    }
}

/// A rank of another version is refused at join, and every rank is told why at once.
#[test]
fn a_rank_of_another_version_is_refused_to_every_rank_at_once() {
    let sent = Sent::default();
    let root = ScriptedRoot {
        size: 3,
        record: br#"{"rank":1,"host":"h","pid":1,"version":"9.9.9"}"#.to_vec(),
        sent: sent.clone(),
    };
    let e = Group::join(Box::new(root), Duration::from_secs(600))
        .err()
        .expect("refused")
        .message;
    let wanted = format!(
        "rank 1 runs dfsbench 9.9.9, rank 0 runs {}: run the same dfsbench on every rank",
        build()
    );
    assert_eq!(e, wanted);
    let told: Vec<usize> = sent
        .borrow()
        .iter()
        .filter(|(_, tag, data)| *tag == TAG_SYNC && refused(data) == Err(wanted.clone()))
        .map(|(to, _, _)| *to)
        .collect();
    assert_eq!(told, [1, 2], "every rank hears why, rank 2 before it was even started");
}

#[test]
fn a_member_of_another_version_is_named() {
    let e = member_record(2, br#"{"rank":2,"host":"h","pid":1,"version":"9.9.9"}"#).unwrap_err();
    assert_eq!(
        e,
        format!(
            "rank 2 runs dfsbench 9.9.9, rank 0 runs {}: run the same dfsbench on every rank",
            build()
        )
    );
    let e = member_record(2, br#"{"rank":"two","version":"9.9.9"}"#).unwrap_err();
    assert!(e.contains("runs dfsbench 9.9.9"), "{e}");
    let e = member_record(2, br#"{"rank":2,"host":"h","pid":1}"#).unwrap_err();
    assert!(e.contains("of an unknown version"), "{e}");
    let e = member_record(2, b"\xff\xfe").unwrap_err();
    assert!(e.contains("cannot read"), "{e}");
    let m = format!(r#"{{"rank":2,"host":"h","pid":1,"version":"{}"}}"#, build());
    assert!(member_record(2, m.as_bytes()).is_ok());
    assert!(member_record(3, m.as_bytes())
        .unwrap_err()
        .contains("says it is rank 2"));
}

#[test]
fn times_from_another_rank_that_the_clock_cannot_hold_do_not_panic() {
    let g = group(&["a"]);
    for s in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300, 1.8e19] {
        let _ = g.instant(s);
    }
    assert!(g.instant(1.0) > g.instant(0.0));
}

#[test]
fn a_parent_outlasts_its_childrens_wait() {
    let t = Duration::from_secs(2);
    assert_eq!(child_wait(t, 0, 2), t);
    assert_eq!(child_wait(t, 1, 2), Duration::from_millis(1667));
    assert!(child_wait(t, 2, 2) < child_wait(t, 1, 2));
    assert!(child_wait(t, 5, 5) >= t / 2);
}

#[test]
fn an_envelope_reads_back_and_garbage_is_an_error() {
    let e = Envelope {
        losses: vec!["rank 9 (host h, pid 1) exited".into()],
        payload: b"{}".to_vec(),
    };
    let back = Envelope::read(&e.bytes()).unwrap();
    assert_eq!((back.losses, back.payload), (e.losses, e.payload));
    for garbage in [&b""[..], b"\x01", b"\xff\xff\xff\xff{}", b"\x02\0\0\0{x"] {
        assert!(Envelope::read(garbage).is_err(), "{garbage:?}");
    }
    assert_eq!(ranks_list(&[9, 10, 11, 73, 75, 76]), "9-11, 73, 75-76");
}

#[test]
fn shuffled_reads_come_from_another_node() {
    let by_slot = group(&["a", "a", "b", "b", "c", "c"]);
    assert_eq!(
        (0..6).map(|r| by_slot.shuffle_source(r)).collect::<Vec<_>>(),
        [2, 3, 4, 5, 0, 1]
    );
    let round_robin = group(&["a", "b", "a", "b"]);
    assert_eq!(
        (0..4).map(|r| round_robin.shuffle_source(r)).collect::<Vec<_>>(),
        [1, 2, 3, 0]
    );
    let one_node = group(&["a", "a", "a"]);
    assert_eq!(
        (0..3).map(|r| one_node.shuffle_source(r)).collect::<Vec<_>>(),
        [1, 2, 0]
    );
}
