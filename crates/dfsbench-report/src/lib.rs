//! Views of dfsbench result documents: a human table (as fio and mdtest print) and CSV.
//! Every view is derived from the result JSON, so any old run can be re-reported.

mod csv;
mod table;

pub use csv::phases_csv;
pub use table::{phases_table, rate_si};
