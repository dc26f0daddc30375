//! Writing what a verb produces.

use std::path::Path;

/// Writes `text` to `path`, creating its folder.
pub(crate) fn write(path: &Path, text: &str) -> perfshape_experiments::Result {
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, text))
        .map_err(|e| {
            perfshape::Error::Io {
                what: format!("writing {}", path.display()),
                source: e,
            }
            .into()
        })
}

/// A URL as a file name: letters and digits kept, every run of others one `-`.
pub(crate) fn file_name(url: &str) -> String {
    let name: String = url
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name.split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}
