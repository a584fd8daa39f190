//! The FUSE client of a lab's file system, in the root namespace or on a client node. Every
//! place mounts at the same path (`<lab dir>/NAME/mnt`), so one `file://` target means each
//! node's own client: its own page cache and connections.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::state::State;
use crate::sys::{self, wait_for};
use crate::traits::Cluster;
use crate::{Error, Result};

/// FUSE clients talk to lab addresses only: a proxy the environment names would take them off
/// the machine (s3fs follows one through libcurl).
const PROXY_VARS: &[&str] = &["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"];

/// Mount the layout's file system at the lab's mount point: in the root namespace (`client`
/// None) or on a client node; nothing when the layout has no file-system target.
pub(crate) fn fuse(cl: &dyn Cluster, state: &mut State, client: Option<&str>, limit: Duration) -> Result<()> {
    let mnt = state.mount_point();
    std::fs::create_dir_all(&mnt).map_err(|e| Error::runtime(format!("cannot create {}: {e}", mnt.display())))?;
    let mnt_arg = mnt.display().to_string();
    let (logs, holder) = match client {
        None => (state.dir().join("log"), None),
        Some(name) => {
            let c = state
                .client(name)
                .ok_or_else(|| Error::runtime(format!("no client node {name}")))?;
            let holder = c.holder.clone().filter(|h| h.alive());
            let holder = holder.ok_or_else(|| Error::runtime(format!("client node {name} is down")))?;
            (c.node.data_dir.clone(), Some(holder.pid))
        }
    };
    std::fs::create_dir_all(&logs).map_err(|e| Error::runtime(format!("cannot create {}: {e}", logs.display())))?;
    let Some(argv) = cl.fuse_client(state, &mnt_arg, &logs) else {
        return Ok(());
    };
    if client.is_none() && !state.mounts.contains(&mnt_arg) {
        state.mounts.push(mnt_arg.clone());
        state.save()?;
    }
    let program = argv[0].clone();
    let mut cmd = match holder {
        None => Command::new(&program),
        Some(pid) => {
            let mut c = Command::new("nsenter");
            c.args(sys::enter_node(pid)).arg(&program);
            c
        }
    };
    cmd.args(&argv[1..]);
    for v in PROXY_VARS {
        cmd.env_remove(v);
    }
    let what = format!(
        "{program} mount{}",
        client.map(|c| format!(" on {c}")).unwrap_or_default()
    );
    let pid = sys::spawn(cmd, &what, &logs.join(format!("{program}.out")))?;
    state.pids.push(pid);
    state.save()?;
    wait_for(&format!("the {what}"), limit, || mounted_in(holder, &mnt).then_some(()))
}

/// `mnt` is a mount point in the mount namespace of `holder` (None: ours).
pub(crate) fn mounted_in(holder: Option<i32>, mnt: &Path) -> bool {
    let real = sys::real_path(mnt).display().to_string();
    sys::mounts_of(holder).iter().any(|(point, _)| *point == real)
}

/// Our mount of `mnt` is there and its FUSE client answers (a killed one leaves the mount
/// listed, answering ENOTCONN; an unmounted one leaves the plain directory under it). A client
/// that takes longer than a few seconds counts as serving: one waiting for a stopped server
/// is the run's to measure, not this check's to hang on.
pub(crate) fn serving(mnt: &Path) -> bool {
    if !mounted_in(None, mnt) {
        return false;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let path = mnt.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(statfs_answers(&path));
    });
    rx.recv_timeout(Duration::from_secs(5)).unwrap_or(true)
}

/// statfs(2) of a FUSE mount always asks its client, where a stat(2) of the mount's root can
/// be answered from the kernel's attribute cache for a client that is already dead.
fn statfs_answers(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mut buf = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c_path` is NUL-terminated and `buf` is a statfs the call fills.
    unsafe { libc::statfs(c_path.as_ptr(), buf.as_mut_ptr()) == 0 }
}
