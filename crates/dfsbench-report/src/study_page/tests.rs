//! The study page's figures: one legend entry per system, log axes for lines far apart.

use super::*;

const AT: Place = Place {
    prefix: "",
    colours: &[0, 1],
};

fn num(v: f64) -> CellDoc {
    CellDoc {
        value: Some(v),
        text: v.to_string(),
        unit: "MiB/s".into(),
        ..Default::default()
    }
}

fn gap() -> CellDoc {
    CellDoc {
        text: "n/a: no positional writes on s3".into(),
        unit: "MiB/s".into(),
        footnote: Some(1),
        ..Default::default()
    }
}

/// Two systems, one of them without numbers; a figure over both rows of column 0 and one
/// over column 1, which has none.
fn doc() -> StudyTables {
    let row = |t: &str, a: f64| RowDoc {
        labels: vec![t.into()],
        cells: vec![vec![num(a), gap()], vec![gap(), gap()]],
    };
    let fig = |column: usize| FigureSpec {
        kind: FigureKind::Line,
        title: format!("column {column}"),
        x_label: "threads".into(),
        x_axis: XAxis::Count,
        y_label: "MiB/s".into(),
        series: vec![SeriesSpec {
            table: 0,
            column,
            rows: vec![0, 1],
            x: vec![1.0, 2.0],
            dashed: false,
            dashed_label: None,
        }],
        caption: None,
        categories: Vec::new(),
    };
    StudyTables {
        schema: SCHEMA.into(),
        study: "fio-matrix".into(),
        title: "t".into(),
        publication: "p".into(),
        study_id: "id".into(),
        status: "complete".into(),
        scale: 0.01,
        systems: ["disk", "s3"]
            .map(|l| SystemColumn {
                label: l.into(),
                target: format!("{l}://x"),
            })
            .into(),
        tables: vec![TableDoc {
            title: "write".into(),
            row_header: vec!["threads".into()],
            columns: vec!["4K".into(), "128K".into()],
            rows: vec![row("1", 10.0), row("2", 20.0)],
        }],
        figures: vec![fig(0), fig(1)],
        footnotes: vec!["n/a: job 'write' needs positional writes but the s3 backend does not support it".into()],
        notes: Vec::new(),
        warnings: Vec::new(),
        points: Vec::new(),
    }
}

#[test]
fn a_figure_names_every_system_once_and_the_ones_without_numbers() {
    let d = doc();
    let at = Place {
        prefix: "",
        colours: &[0, 1],
    };
    let svg = draw(&d, &d.figures[0], &at).unwrap().expect("disk has numbers");
    // The legend: one entry per system, each in its colour.
    for (k, l) in ["disk", "s3"].iter().enumerate() {
        assert!(
            svg.contains(&format!(">\n{l}\n</text>")) || svg.contains(&format!(">{l}</text>")),
            "{svg}"
        );
        assert!(svg.contains(&system_colour(k).to_uppercase()[1..]), "{l}'s colour");
    }
    assert_eq!(gaps(&d, &d.figures[0]), ["s3: n/a: no positional writes on s3 [1]"]);
    assert!(draw(&d, &d.figures[1], &at).unwrap().is_none(), "no numbers, no figure");
    let html = figures(&d, &at).unwrap();
    assert_eq!(html.matches("<figure").count(), 1);
    assert!(html.contains("Not drawn, no system has a number in them: column 1."));
}

/// surfnet's shape: sizes on x, a solid and a dashed series 1000x apart. The y axis is log
/// (and says so), the dashed series has a legend entry, the ticks are the sizes measured.
#[test]
fn lines_far_apart_get_a_log_axis_and_dashes_a_legend_entry() {
    let mut d = doc();
    d.tables[0].rows[1].cells[0][0] = num(0.02);
    let sizes = vec![8192.0, 8.0 * 1024.0 * 1024.0];
    let series = |column: usize, dashed: bool| SeriesSpec {
        table: 0,
        column,
        rows: vec![if dashed { 1 } else { 0 }, if dashed { 1 } else { 0 }],
        x: sizes.clone(),
        dashed,
        dashed_label: dashed.then(|| "+20 ms RTT".to_string()),
    };
    let mut f = d.figures[0].clone();
    f.x_axis = XAxis::Bytes;
    f.series = vec![series(0, false), series(0, true)];
    let svg = draw(&d, &f, &AT).unwrap().expect("numbers");
    assert!(svg.contains("MiB/s (log scale)"), "{svg}");
    assert!(svg.contains("disk +20 ms RTT"), "{svg}");
    for tick in ["8 KiB", "8 MiB"] {
        assert!(svg.contains(tick), "{tick}: {svg}");
    }
    assert!(
        !svg.contains("16 KiB") && !svg.contains("4 MiB"),
        "no ticks between the sizes"
    );
    // 37x apart (GlusterFS's seq writes, 106 and 2.86 MiB/s) is still log: linear, the
    // small line would lie within a tenth of the height.
    d.tables[0].rows[1].cells[0][0] = num(10.0 / 37.0);
    let svg = draw(&d, &f, &AT).unwrap().expect("numbers");
    assert!(svg.contains("MiB/s (log scale)"), "{svg}");
    // Close values keep the linear axis from zero.
    d.tables[0].rows[1].cells[0][0] = num(5.0);
    let svg = draw(&d, &f, &AT).unwrap().expect("numbers");
    assert!(!svg.contains("log scale"), "{svg}");
}
