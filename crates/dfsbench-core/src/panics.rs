//! Panics are bugs: the process reports the first one in one line instead of a backtrace, and
//! the runner turns one in a worker thread into a failed run with its partial result.

use std::sync::Mutex;

static FIRST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Keep the first panic's message and place instead of printing them; with `RUST_BACKTRACE`
/// set the standard report (and backtrace) is printed too, for whoever debugs it.
pub fn install_panic_hook() {
    let standard = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let text = format!("{}{place}", payload_text(info.payload()));
        let mut first = FIRST_PANIC.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(text.replace('\n', " "));
        drop(first);
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            standard(info);
        }
    }));
}

/// The first panic of the process: its message and where it happened.
pub(crate) fn first_panic() -> Option<String> {
    FIRST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The message a panic carries (`panic!("...")` gives a `&str` or a `String`).
pub(crate) fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The one line a user sees for a panic.
pub fn internal_error(payload: Option<&(dyn std::any::Any + Send)>) -> String {
    let what = first_panic()
        .or_else(|| payload.map(payload_text))
        .unwrap_or_else(|| "a thread panicked".into());
    format!("internal error: {what}; please report it with the command line")
}
