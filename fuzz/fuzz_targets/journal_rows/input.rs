//! The `journal_rows` input format: one journal row per line, `TABLE<TAB>VALUE<TAB>VALUE…` with the values
//! in the order of the table's columns (as the engine's schema declares them; missing trailing columns take
//! their defaults), written into a state directory's `journal.db` as the `sqlite3` shell would.
//!
//! A value is `\N` (NULL), `i:INTEGER`, `f:REAL`, `x:HEX` (a blob), `u:HEX` (text of those bytes, UTF-8 or
//! not), `t:TEXT` (text as is), or else text with `\t`, `\n`, `\0` and `\\` escapes. A line `!unchecked`
//! turns SQLite's CHECK constraints off (`PRAGMA ignore_check_constraints`), as a hand edit can; foreign
//! keys are off, as in the shell. Lines starting with `#`, lines of unknown tables and rows SQLite refuses
//! are skipped.

use rusqlite::Connection;
use rusqlite::types::Value;

/// At most this many rows per input (the fuzzer's inputs stay small and fast).
pub const MAX_ROWS: usize = 200;

/// A table of the engine's schema and its columns, in declaration order.
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
}

/// One value of a row, and whether it is bound as text made of its blob's bytes (`u:`).
#[derive(Clone, Debug)]
pub struct Cell {
    pub value: Value,
    pub cast_text: bool,
}

/// One row of the input.
pub struct Row {
    pub table: usize,
    pub cells: Vec<Cell>,
}

/// A parsed input.
pub struct Input {
    pub unchecked: bool,
    pub rows: Vec<Row>,
}

/// The tables of the journal at `db` (what `Journal::open` made), with their columns.
pub fn tables(conn: &Connection) -> Vec<Table> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("the schema reads");
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .expect("the schema reads")
        .collect::<Result<_, _>>()
        .expect("the schema reads");
    names
        .into_iter()
        .map(|name| {
            let mut info = conn
                .prepare(&format!(
                    "SELECT name FROM pragma_table_info('{name}') ORDER BY cid"
                ))
                .expect("the columns read");
            let columns = info
                .query_map([], |r| r.get(0))
                .expect("the columns read")
                .collect::<Result<_, _>>()
                .expect("the columns read");
            Table { name, columns }
        })
        .collect()
}

/// The rows of `text` for `tables`.
pub fn parse(text: &str, tables: &[Table]) -> Input {
    let mut input = Input {
        unchecked: false,
        rows: Vec::new(),
    };
    for line in text.lines() {
        if input.rows.len() >= MAX_ROWS {
            break;
        }
        if line == "!unchecked" {
            input.unchecked = true;
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let name = fields.next().unwrap_or_default();
        let Some(table) = tables.iter().position(|t| t.name == name) else {
            continue;
        };
        let cells: Vec<Cell> = fields.take(tables[table].columns.len()).map(cell).collect();
        if !cells.is_empty() {
            input.rows.push(Row { table, cells });
        }
    }
    input
}

fn cell(field: &str) -> Cell {
    let plain = |value| Cell {
        value,
        cast_text: false,
    };
    if field == "\\N" {
        return plain(Value::Null);
    }
    if let Some(n) = field.strip_prefix("i:").and_then(|n| n.parse().ok()) {
        return plain(Value::Integer(n));
    }
    if let Some(r) = field.strip_prefix("f:").and_then(|r| r.parse().ok()) {
        return plain(Value::Real(r));
    }
    if let Some(bytes) = field.strip_prefix("x:").and_then(unhex) {
        return plain(Value::Blob(bytes));
    }
    if let Some(bytes) = field.strip_prefix("u:").and_then(unhex) {
        return Cell {
            value: Value::Blob(bytes),
            cast_text: true,
        };
    }
    if let Some(text) = field.strip_prefix("t:") {
        return plain(Value::Text(text.to_string()));
    }
    plain(Value::Text(unescape(field)))
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Writes `input`'s rows into the journal file `db`, as a hand edit would: each row on its own (a row
/// SQLite refuses — a NOT NULL, primary key or CHECK violation — is skipped).
pub fn write(db: &std::path::Path, input: &Input, tables: &[Table]) {
    let conn = Connection::open(db).expect("the journal file opens");
    // The shell's default (rusqlite's bundled SQLite turns foreign keys on).
    conn.execute_batch("PRAGMA foreign_keys = OFF")
        .expect("a pragma");
    if input.unchecked {
        conn.execute_batch("PRAGMA ignore_check_constraints = ON")
            .expect("a pragma");
    }
    for row in &input.rows {
        let table = &tables[row.table];
        let columns: Vec<String> = table.columns[..row.cells.len()]
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect();
        let values: Vec<String> = row
            .cells
            .iter()
            .enumerate()
            .map(|(i, c)| match c.cast_text {
                true => format!("CAST(?{} AS TEXT)", i + 1),
                false => format!("?{}", i + 1),
            })
            .collect();
        let sql = format!(
            "INSERT INTO \"{}\" ({}) VALUES ({})",
            table.name,
            columns.join(", "),
            values.join(", ")
        );
        let _ = conn.execute(
            &sql,
            rusqlite::params_from_iter(row.cells.iter().map(|c| &c.value)),
        );
    }
}

/// Every row of every table of the journal file `db`, in this format (what the seed generator writes).
pub fn dump(db: &std::path::Path, tables: &[Table]) -> String {
    let conn = Connection::open(db).expect("the journal file opens");
    let mut out = String::new();
    for table in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{}\"", table.name))
            .expect("a table reads");
        let mut rows = stmt.query([]).expect("a table reads");
        while let Some(row) = rows.next().expect("a row reads") {
            out.push_str(&table.name);
            for i in 0..table.columns.len() {
                out.push('\t');
                out.push_str(&encode(&row.get::<_, Value>(i).expect("a value")));
            }
            out.push('\n');
        }
    }
    out
}

fn encode(value: &Value) -> String {
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    match value {
        Value::Null => "\\N".into(),
        Value::Integer(n) => format!("i:{n}"),
        Value::Real(r) => format!("f:{r}"),
        Value::Blob(b) => format!("x:{}", hex(b)),
        Value::Text(t) if t.contains(['\t', '\n', '\\', '\0']) => {
            format!("u:{}", hex(t.as_bytes()))
        }
        Value::Text(t) if t.len() > 1 && t.as_bytes()[1] == b':' => format!("t:{t}"),
        Value::Text(t) => t.clone(),
    }
}
