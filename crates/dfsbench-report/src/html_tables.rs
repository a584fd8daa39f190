//! The HTML report's tables, written with maud (which escapes every value it is given): the
//! summary (a row per phase and run, a line per operation kind of a mixed phase), the page
//! cache and marks, the rate steps and the errors.

use dfsbench_result::PhaseResult;
use maud::{html, Markup};

use crate::flags;
use crate::fmt;
use crate::lines;
use crate::noise;
use crate::runs::{self, Run};
use crate::stonewall;
use crate::svg;

/// The run's colour as a small square before its name.
pub(crate) fn swatch(run: &Run) -> Markup {
    html! { span.swatch style=(format!("background:{}", svg::hex(svg::colour(run.colour)))) {} }
}

/// A phase's marks as highlighted spans whose title gives the reasons.
fn marks(p: &PhaseResult) -> Markup {
    html! {
        @if !p.cache_suspect.is_empty() {
            " " span.bad title=(p.cache_suspect.join("; ")) { (flags::SUSPECT_MARK) }
        }
        @if !p.validity.is_empty() {
            " " span.bad title=(p.validity.join(", ")) { (flags::WEAK_MARK) }
        }
    }
}

/// Which optional columns the summary has: job (several jobs in a run), run (several runs),
/// server CPU (some phase watched server processes).
struct Columns {
    job: bool,
    run: bool,
    server_cpu: bool,
}

fn cores(v: f64) -> String {
    format!("{v:.2}")
}

fn server_cpu(p: &PhaseResult) -> Markup {
    html! {
        @match &p.server_cpu {
            Some(s) => {
                (cores(s.cores))
                @if let Some(note) = s.pids_note() {
                    " " span.bad title="server processes that ended (not counted) or started (counted) during the phase" {
                        "(" (note) ")"
                    }
                }
            }
            None => "–",
        }
    }
}

/// The rows of one phase of one run: its own, then one per operation kind.
fn phase_rows(cols: &Columns, first: bool, title: &str, run: &Run, p: &PhaseResult) -> Markup {
    let gap = stonewall::gap(p).filter(|g| g.abs() > stonewall::GAP);
    html! {
        @for l in lines::lines(p) {
            @let own = l.op.is_none();
            tr class=(match (own, first) { (true, true) => "phase first", (true, false) => "phase", _ => "kind" }) {
                td.l {
                    @match l.op {
                        None if first => { (title) (marks(p)) }
                        None => {}
                        Some(op) => span.op { "↳ " (op) }
                    }
                }
                @if cols.job { td.l { @if own && first { (p.job_name) } } }
                @if cols.run { td.l { @if own { (swatch(run)) (run.label) } } }
                td { @if own { (p.workers) } }
                td { (l.ops) }
                td { (fmt::rate(l.ops_per_sec)) }
                td {
                    @if own {
                        @match gap {
                            Some(g) => span.bad title=(format!("differs from the phase rate by {}: see the note under the table", fmt::change(g * 100.0))) {
                                (stonewall::rate(p, "–"))
                            },
                            None => (stonewall::rate(p, "–")),
                        }
                    }
                }
                td { (l.bytes_per_sec.map_or("–".into(), fmt::mib_s)) }
                td { (lines::lat(l.latency, l.latency.p50_ns, "–")) }
                td { (lines::lat(l.latency, l.latency.p99_ns, "–")) }
                td { (lines::lat(l.latency, l.latency.p99_9_ns, "–")) }
                td { (lines::lat(l.latency, l.latency.max_ns, "–")) }
                td { @if own { (fmt::seconds(p.duration_s)) } }
                td { @if own { (noise::ops_cv(p).map_or("–".into(), |cv| format!("±{:.1}%", cv * 100.0))) } }
                td { @if own { (cores(p.cpu.cores)) } }
                @if cols.server_cpu { td { @if own { (server_cpu(p)) } } }
                td {
                    @if own {
                        @if p.errors.total > 0 { span.bad { (p.errors.total) } } @else { "0" }
                    }
                }
            }
        }
    }
}

/// The summary table, its note, and the phases whose stonewall and phase rate differ by more
/// than 10%.
pub(crate) fn summary(runs: &[Run], keys: &[(String, String)], ambiguous: bool) -> Markup {
    let cols = Columns {
        job: runs::several_jobs(runs),
        run: runs.len() > 1,
        server_cpu: runs.iter().any(|r| r.phases().any(|p| p.server_cpu.is_some())),
    };
    let mut gaps = Vec::new();
    let mut body = Vec::new();
    for k in keys {
        let mut first = true;
        for r in runs {
            if let Some(p) = runs::find(r, k) {
                let title = runs::phase_title(k, ambiguous && !cols.job);
                body.push(phase_rows(&cols, first, &title, r, p));
                let who = if cols.run {
                    format!("{} {title}", r.label)
                } else {
                    title
                };
                gaps.extend(stonewall::explain(p, &who));
                first = false;
            }
        }
    }
    html! {
        div.scroll {
            table.summary {
                thead {
                    tr {
                        th.l { "phase" }
                        @if cols.job { th.l { "job" } }
                        @if cols.run { th.l { "run" } }
                        th { "workers" } th { "ops" } th { "ops/s" }
                        th title="all workers at once: what every worker had done when the first one finished" { "stonewall" br; "ops/s" }
                        th { "MiB/s" } th { "p50" } th { "p99" } th { "p99.9" } th { "max" } th { "time" }
                        th title=(noise::RULE) { "noise" }
                        th title="cores busy in the client processes" { "client" br; "CPU" }
                        @if cols.server_cpu { th title="cores busy in the watched server processes (--server-pid)" { "server" br; "CPU" } }
                        th { "errors" }
                    }
                }
                tbody { @for rows in &body { (rows) } }
            }
        }
        p.note {
            "Rates over each phase's measured time; ↳ lines are a mixed phase's operation kinds, each with its own \
             rates and latency; latency of successful operations from the merged HDR histogram; stonewall: the rate \
             of all workers at once, up to when the first one finished; CPU in cores busy; noise: " (noise::RULE) "."
        }
        @if !gaps.is_empty() {
            div.warn.stonewall {
                b { "Stonewall and phase rate differ by more than 10%" }
                ul { @for g in &gaps { li { (g) } } }
            }
        }
    }
}

/// Each read phase's page cache policy and every marked phase with its reasons; empty when no
/// phase has either.
pub(crate) fn marks_section(runs: &[Run]) -> Markup {
    let marked = |p: &&PhaseResult| p.cache.is_some() || !p.cache_suspect.is_empty() || !p.validity.is_empty();
    if !runs.iter().any(|r| r.phases().any(|p| marked(&p))) {
        return html! {};
    }
    html! {
        h2 #marks { "Page cache and marks" }
        table.marks {
            thead { tr { th.l { "run" } th.l { "phase" } th.l { "page cache" } th.l { "marks" } } }
            tbody {
                @for r in runs {
                    @for p in r.phases().filter(marked) {
                        tr {
                            td.l { (swatch(r)) (r.label) }
                            td.l { (runs::label(p)) (marks(p)) }
                            td.l { (flags::cache(p)) }
                            td.l style="white-space:normal" { (flags::reasons(p)) }
                        }
                    }
                }
            }
        }
        p.note {
            "[cache?]: the reads may have come from the client's page cache, not the storage. [weak]: shorter than \
             1 s, fewer than 1000 operations, a stonewall window under half of the phase, or latencies clustered at \
             40 ms (Nagle and delayed ACKs on the server); the marks column says which."
        }
    }
}

/// Jobs that ran at the same time: each group's total and its kinds of operation; empty when
/// every job ran alone.
pub(crate) fn groups(runs: &[Run]) -> Markup {
    if runs.iter().all(|r| r.result.groups.is_empty()) {
        return html! {};
    }
    html! {
        h2 #groups { "Jobs at the same time" }
        p.note { "Each group's jobs started together; its rates are over its span, from the first measured start to the last end, and its latencies are every operation of its jobs, merged exactly." }
        table.groups {
            thead {
                tr {
                    th.l { "run" } th.l { "jobs / operation" } th { "span" } th { "ops" } th { "ops/s" }
                    th { "MiB/s" } th { "p50" } th { "p99" } th { "max" } th { "errors" }
                }
            }
            tbody {
                @for r in runs {
                    @for g in &r.result.groups {
                        tr {
                            td.l { (swatch(r)) (r.label) }
                            td.l { (g.jobs.join(" + ")) }
                            td { (format!("{:.2} s", g.duration_s)) }
                            td { (g.ops) }
                            td { (fmt::rate(g.ops_per_sec)) }
                            td { (format!("{:.1}", g.bytes_per_sec / 1048576.0)) }
                            td { (lines::lat(&g.latency, g.latency.p50_ns, "–")) }
                            td { (lines::lat(&g.latency, g.latency.p99_ns, "–")) }
                            td { (lines::lat(&g.latency, g.latency.max_ns, "–")) }
                            td { (g.errors) }
                        }
                        @for k in &g.by_kind {
                            tr {
                                td.l {}
                                td.l style="padding-left:1.5em" { (k.op) }
                                td {}
                                td { (k.ops) }
                                td { (fmt::rate(k.ops_per_sec)) }
                                td { (format!("{:.1}", k.bytes_per_sec / 1048576.0)) }
                                td { (lines::lat(&k.latency, k.latency.p50_ns, "–")) }
                                td { (lines::lat(&k.latency, k.latency.p99_ns, "–")) }
                                td { (lines::lat(&k.latency, k.latency.max_ns, "–")) }
                                td {}
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Requested against achieved rate and response time of every paced phase.
pub(crate) fn rate_steps(runs: &[Run]) -> Markup {
    html! {
        table.rates {
            thead {
                tr {
                    th.l { "run" } th.l { "phase" } th { "requested/s" } th { "achieved/s" }
                    th { "mean" } th { "p50" } th { "p99" } th { "service p50" }
                }
            }
            tbody {
                @for r in runs {
                    @for p in r.phases() {
                        @if let Some(rate) = &p.rate {
                            @let l = &p.latency;
                            tr {
                                td.l { (swatch(r)) (r.label) }
                                td.l { (runs::label(p)) }
                                td { (fmt::rate(rate.requested_ops_per_sec)) }
                                td { (fmt::rate(rate.achieved_ops_per_sec)) }
                                td { (lines::lat(l, l.mean_ns.round() as u64, "–")) }
                                td { (lines::lat(l, l.p50_ns, "–")) }
                                td { (lines::lat(l, l.p99_ns, "–")) }
                                td { (lines::lat(&rate.service_latency, rate.service_latency.p50_ns, "–")) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Errors by kind, each kind's first few samples in full; empty without errors.
/// Runs over several gateways: what the workers of each one did.
pub(crate) fn endpoints(runs: &[Run]) -> Markup {
    if !runs.iter().any(|r| r.phases().any(|p| !p.endpoints.is_empty())) {
        return html! {};
    }
    html! {
        h2 #endpoints { "Per endpoint" }
        p.note {
            "The target's gateways: worker " i { "w" } " talks to gateway " i { "w" } " mod " i { "n" }
            ". Rates over the phase's measured time; latency from the gateway's merged histograms."
        }
        div.scroll { table.endpoints {
            thead {
                tr {
                    th.l { "run" } th.l { "phase" } th.l { "endpoint" } th { "workers" } th { "ops" }
                    th { "ops/s" } th { "MiB/s" } th { "p50" } th { "p99" } th { "errors" } th { "share" }
                }
            }
            tbody {
                @for r in runs {
                    @for p in r.phases() {
                        @for e in &p.endpoints {
                            tr {
                                td.l { (swatch(r)) (r.label) }
                                td.l { (runs::label(p)) }
                                td.l { (e.endpoint) }
                                td { (e.workers) }
                                td { (e.ops) }
                                td { (fmt::rate(e.ops_per_sec)) }
                                td { @if runs::moves_data(p) { (fmt::mib_s(e.bytes_per_sec)) } @else { "–" } }
                                td { (lines::lat(&e.latency, e.latency.p50_ns, "–")) }
                                td { (lines::lat(&e.latency, e.latency.p99_ns, "–")) }
                                @if e.errors > 0 { td.bad { (e.errors) } } @else { td { "0" } }
                                td { (format!("{:.0}%", 100.0 * e.ops as f64 / p.ops.max(1) as f64)) }
                            }
                        }
                    }
                }
            }
        } }
    }
}

pub(crate) fn errors(runs: &[Run]) -> Markup {
    if !runs.iter().any(|r| r.phases().any(|p| p.errors.total > 0)) {
        return html! {};
    }
    html! {
        h2 #errors { "Errors" }
        table.errors {
            thead {
                tr {
                    th.l { "run" } th.l { "phase" } th.l { "kind" } th { "count" }
                    th.l { "first " (crate::errors::SHOWN) " in full" }
                }
            }
            tbody {
                @for r in runs {
                    @for p in r.phases().filter(|p| p.errors.total > 0) {
                        @for (kind, n) in &p.errors.by_kind {
                            tr {
                                td.l { (swatch(r)) (r.label) }
                                td.l { (runs::label(p)) }
                                td.l { (kind) }
                                td.bad { (n) }
                                td.l.sample {
                                    ul { @for s in crate::errors::first(p, kind) { li { code { (crate::errors::sample(s)) } } } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
