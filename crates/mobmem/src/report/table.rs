//! The long-format table every report is written from: key columns that say which run a
//! row is, and the figures measured for it.

use serde::Serialize;

use crate::core::stats::Stats;

/// A row filter from string pairs: `filter(&[("workload", "w")])`.
pub fn filter(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Results of one experiment in long format.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Table {
    pub experiment: String,
    pub title: String,
    /// Names of the key columns, in order.
    pub keys: Vec<String>,
    pub rows: Vec<Row>,
}

/// One run: its key values (as many as `Table::keys`) and its figures by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub keys: Vec<String>,
    pub values: Vec<(String, f64)>,
}

impl Row {
    /// A row of a result's figures, by their [`Stats`] names, in the listing's order.
    pub fn of_stats(keys: Vec<String>, stats: &(impl Stats + ?Sized)) -> Row {
        Row {
            keys,
            values: (stats.values().into_iter())
                .map(|(name, value)| (name.to_string(), value))
                .collect(),
        }
    }

    pub fn value(&self, metric: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(m, _)| m == metric)
            .map(|(_, v)| *v)
    }
}

impl Table {
    fn column(&self, key: &str) -> Option<usize> {
        self.keys.iter().position(|k| k == key)
    }

    /// The value of key column `key` in `row`.
    pub fn key<'a>(&self, row: &'a Row, key: &str) -> Option<&'a str> {
        self.column(key)
            .and_then(|i| row.keys.get(i))
            .map(String::as_str)
    }

    /// Rows whose key columns equal the given values.
    pub fn select<'a>(
        &'a self,
        filter: &'a [(String, String)],
    ) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows.iter().filter(move |row| {
            filter
                .iter()
                .all(|(k, v)| self.key(row, k) == Some(v.as_str()))
        })
    }

    /// `metric` of the first row matching `filter`; NaN when there is none or it lacks
    /// the metric.
    pub fn first_value(&self, filter: &[(String, String)], metric: &str) -> f64 {
        self.select(filter)
            .next()
            .and_then(|r| r.value(metric))
            .unwrap_or(f64::NAN)
    }

    /// `metric` against the numeric key column `x`, over the rows matching `filter`,
    /// sorted by x (rows whose x is not a number or that lack the metric are left out).
    pub fn curve(&self, filter: &[(String, String)], x: &str, metric: &str) -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64)> = self
            .select(filter)
            .filter_map(|r| Some((self.key(r, x)?.parse().ok()?, r.value(metric)?)))
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// Distinct values of a key column, in first-seen order.
    pub fn distinct(&self, key: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for row in &self.rows {
            if let Some(v) = self.key(row, key) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_string());
                }
            }
        }
        out
    }

    /// Rows as JSON objects: key columns by name, then `metrics: {name: value}` (NaN as
    /// null).
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|row| {
                let mut obj = serde_json::Map::new();
                for (k, v) in self.keys.iter().zip(&row.keys) {
                    obj.insert(k.clone(), v.clone().into());
                }
                let metrics: serde_json::Map<String, serde_json::Value> = row
                    .values
                    .iter()
                    .map(|(m, v)| {
                        (
                            m.clone(),
                            serde_json::Number::from_f64(*v)
                                .map_or(serde_json::Value::Null, Into::into),
                        )
                    })
                    .collect();
                obj.insert("metrics".into(), metrics.into());
                obj.into()
            })
            .collect();
        serde_json::json!({ "experiment": self.experiment, "title": self.title, "rows": rows })
    }
}
