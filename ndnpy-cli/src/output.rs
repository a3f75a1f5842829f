//! What the command prints: text or one JSON array of items (streamed item
//! by item), the errors gathered on the way, the exit code, and the
//! progress bar.

use crate::error::{CliError, EXIT_OK};
use serde_json::Value;
use std::io::Write;

/// `v` as `serde_json::to_string_pretty` writes it, every line indented by
/// `by` spaces (as it stands inside arrays and objects).
pub(crate) fn indented(v: &Value, by: usize) -> String {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    let pad = " ".repeat(by);
    pretty
        .lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a command produces: text for people or JSON for programs, written
/// as it comes (an archive of 65 536 members is never held as text or
/// JSON), the errors (printed last, on stderr) and the exit code.
pub(crate) struct Outcome {
    pub(crate) out: std::io::BufWriter<std::io::Stdout>,
    pub(crate) json: bool,
    /// JSON items written so far (the output is one array).
    pub(crate) items: usize,
    /// A JSON document that is not an array (`convert`'s), written at the
    /// end.
    pub(crate) document: Option<Value>,
    pub(crate) errors: Vec<String>,
    pub(crate) code: i32,
    /// (local stand-in, URL) pairs: output names the URL the user typed.
    pub(crate) aliases: Vec<(String, String)>,
}

impl Outcome {
    pub(crate) fn new(json: bool) -> Outcome {
        Outcome {
            out: std::io::BufWriter::new(std::io::stdout()),
            json,
            items: 0,
            document: None,
            errors: Vec::new(),
            code: EXIT_OK,
            aliases: Vec::new(),
        }
    }

    /// Text for people (ignored under `--json`).
    pub(crate) fn text(&mut self, text: &str) {
        if !self.json {
            let text = self.unalias(text);
            let _ = self.out.write_all(text.as_bytes());
        }
    }

    /// One item of the JSON array (ignored without `--json`), formatted as
    /// `serde_json::to_string_pretty` formats it inside the array.
    pub(crate) fn item(&mut self, v: Value) {
        if !self.json {
            return;
        }
        self.begin_item();
        self.raw(&indented(&v, 2));
    }

    /// Starts one item of the JSON array, whose text the caller writes
    /// with [`Outcome::raw`] (an archive's members one by one).
    pub(crate) fn begin_item(&mut self) {
        let sep = if self.items == 0 { "[\n" } else { ",\n" };
        self.raw(sep);
        self.items += 1;
    }

    pub(crate) fn raw(&mut self, text: &str) {
        let text = self.unalias(text);
        let _ = self.out.write_all(text.as_bytes());
    }

    pub(crate) fn fail(&mut self, e: CliError) {
        self.code = self.code.max(e.code);
        let message = self.unalias(&e.message).into_owned();
        self.errors.push(message);
    }

    /// `text` with local stand-ins of URLs replaced by the URLs.
    pub(crate) fn unalias<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let mut text = std::borrow::Cow::Borrowed(text);
        for (local, url) in &self.aliases {
            if text.contains(local.as_str()) {
                text = std::borrow::Cow::Owned(text.replace(local.as_str(), url));
            }
        }
        text
    }

    /// Ends the output (closes the JSON array, or writes the document).
    pub(crate) fn finish(mut self) -> (Vec<String>, i32) {
        if self.json {
            let _ = match self.document.take() {
                Some(doc) => {
                    let doc = serde_json::to_string_pretty(&doc).unwrap_or_default();
                    let doc = self.unalias(&doc).into_owned();
                    writeln!(self.out, "{doc}")
                }
                None if self.items == 0 => writeln!(self.out, "[]"),
                None => writeln!(self.out, "\n]"),
            };
        }
        let _ = self.out.flush();
        (self.errors, self.code)
    }
}

pub(crate) fn progress_bar() -> indicatif::ProgressBar {
    // Drawn on stderr only when it is a terminal: hidden in pipes and CI.
    let bar =
        indicatif::ProgressBar::with_draw_target(Some(0), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}
