//! docs/result-schema.json is written by hand: it says more than the types can (sizes, patterns,
//! the config of each workload, what each field means). This test keeps it honest against the
//! types with the schema schemars derives from them: every field the types write is in the
//! document and every field of the document is one the types write, at every depth, and what
//! the types always write is required there.

use std::collections::{BTreeMap, BTreeSet};

use dfsbench_result::RunResult;
use serde_json::Value;

/// One side's schema document, to follow its `$ref`s.
struct Doc<'a> {
    root: &'a Value,
}

/// What a schema node says of an object: its properties, required fields, array items and map
/// values, over every branch of an `anyOf`/`oneOf`/`allOf` (a `null` branch says nothing).
#[derive(Default)]
struct Shape<'a> {
    properties: BTreeMap<String, Vec<&'a Value>>,
    required: BTreeSet<String>,
    items: Vec<&'a Value>,
    values: Vec<&'a Value>,
}

impl<'a> Doc<'a> {
    fn resolve(&self, node: &'a Value) -> &'a Value {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let pointer = r.strip_prefix('#').expect("local $ref");
                self.resolve(
                    self.root
                        .pointer(pointer)
                        .unwrap_or_else(|| panic!("dangling $ref {r}")),
                )
            }
            None => node,
        }
    }

    fn shape(&self, node: &'a Value, into: &mut Shape<'a>) {
        let node = self.resolve(node);
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in node.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.shape(branch, into);
            }
        }
        if let Some(props) = node.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                into.properties.entry(k.clone()).or_default().push(v);
            }
        }
        for r in node.get("required").and_then(Value::as_array).into_iter().flatten() {
            into.required.insert(r.as_str().expect("a field name").to_string());
        }
        if let Some(items) = node.get("items").filter(|i| i.is_object()) {
            into.items.push(items);
        }
        if let Some(values) = node.get("additionalProperties").filter(|v| v.is_object()) {
            into.values.push(values);
        }
    }
}

fn shape_of<'a>(doc: &Doc<'a>, nodes: &[&'a Value]) -> Shape<'a> {
    let mut s = Shape::default();
    for n in nodes {
        doc.shape(n, &mut s);
    }
    s
}

/// Walk both schemas from the same place (`at`), collecting every difference.
fn compare(types: (&Doc, &[&Value]), docs: (&Doc, &[&Value]), at: &str, problems: &mut Vec<String>, depth: usize) {
    assert!(depth < 32, "{at}: the schemas nest too deep (a cycle?)");
    let t = shape_of(types.0, types.1);
    let d = shape_of(docs.0, docs.1);
    // A field the types keep as free JSON (the config, params) may be described in any detail.
    if t.properties.is_empty() && t.items.is_empty() && t.values.is_empty() {
        return;
    }
    for (name, t_nodes) in &t.properties {
        let here = format!("{at}.{name}");
        match d.properties.get(name) {
            None => problems.push(format!(
                "{here}: written by the types, missing in docs/result-schema.json"
            )),
            Some(d_nodes) => compare((types.0, t_nodes), (docs.0, d_nodes), &here, problems, depth + 1),
        }
    }
    for name in d.properties.keys().filter(|n| !t.properties.contains_key(*n)) {
        problems.push(format!(
            "{at}.{name}: in docs/result-schema.json, but no type writes it"
        ));
    }
    for name in t.required.difference(&d.required) {
        problems.push(format!(
            "{at}.{name}: always written, but docs/result-schema.json does not require it"
        ));
    }
    if !t.items.is_empty() && !d.items.is_empty() {
        compare(
            (types.0, &t.items),
            (docs.0, &d.items),
            &format!("{at}[]"),
            problems,
            depth + 1,
        );
    }
    if !t.values.is_empty() && !d.values.is_empty() {
        compare(
            (types.0, &t.values),
            (docs.0, &d.values),
            &format!("{at}{{}}"),
            problems,
            depth + 1,
        );
    }
}

#[test]
fn the_documented_schema_has_every_field_of_the_types_and_no_other() {
    let generated = serde_json::to_value(schemars::schema_for!(RunResult)).expect("a schema");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/result-schema.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("docs/result-schema.json"))
        .expect("docs/result-schema.json is JSON");
    let (types, docs) = (Doc { root: &generated }, Doc { root: &written });
    let mut problems = Vec::new();
    compare((&types, &[&generated]), (&docs, &[&written]), "$", &mut problems, 0);
    assert!(
        problems.is_empty(),
        "docs/result-schema.json and the result types differ:\n{}",
        problems.join("\n")
    );
}

/// The walk itself finds what it is for: a field renamed on one side only.
#[test]
fn a_renamed_field_is_found() {
    let generated = serde_json::to_value(schemars::schema_for!(RunResult)).expect("a schema");
    let mut changed = generated.clone();
    let defs = changed["$defs"].as_object_mut().expect("$defs");
    let phase = defs.get_mut("PhaseResult").expect("PhaseResult");
    let ops = phase["properties"].as_object_mut().unwrap().remove("ops").unwrap();
    phase["properties"]["op_count"] = ops;
    let (a, b) = (Doc { root: &generated }, Doc { root: &changed });
    let mut problems = Vec::new();
    compare((&a, &[&generated]), (&b, &[&changed]), "$", &mut problems, 0);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("$.phases[].ops: written by the types, missing")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("$.phases[].op_count: in docs")),
        "{problems:?}"
    );
}
