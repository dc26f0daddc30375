//! Blocking a team knows and accepts, allowed by name: a function in the held worker's
//! stack, a route, or a call — as BlockHound's `allowBlockingCallsInside` and
//! blockbuster's `can_block_in` allow theirs. An allowed hold never breaks a watch, and is
//! never silent: the report and its snapshot list it as allowed, with what it did, and an
//! allow that matched nothing says so.

use crate::blocked_call::BlockedCall;
use crate::stack::Frames;

/// A hold a team accepts, named by where it is. Given to a watch
/// ([`Watch::allow`](crate::Watch::allow), [`WatchGuard::allow`](crate::WatchGuard::allow))
/// or a claim ([`Endpoint::allow`](crate::Endpoint::allow)), it turns a hold that it
/// matches from broken into allowed.
///
/// ```
/// use perfshape::Allow;
///
/// // The configuration read once, synchronously, on the first request: accepted.
/// let config = Allow::function("shop::config::load");
/// // Every blocking call a route makes (a metrics endpoint that reads /proc).
/// let metrics = Allow::route("GET /metrics");
/// // A kind of call wherever it is made.
/// let sync = Allow::call("fdatasync");
/// assert_eq!(config.to_string(), "function `shop::config::load`");
/// # let _ = (metrics, sync);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Allow(By);

/// Where an [`Allow`] looks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum By {
    Function(String),
    Route(String),
    Call(String),
}

impl Allow {
    /// A hold whose worker's stack has a frame of this function, or of anything under this
    /// path (`shop::config` allows `shop::config::load` and its closures;
    /// `tracing_appender` a whole crate). Matched on the stacks the kernel gave of the held
    /// worker (Linux x86-64): where they are not read, or no sample caught the hold, it is
    /// not matched, and the report says why — it never allows what it cannot see.
    pub fn function(path: impl Into<String>) -> Allow {
        Allow(By::Function(
            path.into().trim().trim_end_matches("::").to_string(),
        ))
    }

    /// Every hold of a route, by method and path as the report names it (`GET /metrics`,
    /// `PATCH /todos/{id}`), or by path alone for every method (`/metrics`).
    pub fn route(route: impl Into<String>) -> Allow {
        Allow(By::Route(route.into().trim().to_string()))
    }

    /// A hold in this system call wherever it is made, by the name the report gives it
    /// (`fdatasync`, `fsync`, `clock_nanosleep`, `futex`, `read`), where a sample caught
    /// the worker in it. A stretch of computing is in no call and is never matched.
    pub fn call(name: impl Into<String>) -> Allow {
        Allow(By::Call(
            name.into().trim().trim_end_matches("()").to_string(),
        ))
    }
}

impl std::fmt::Display for Allow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            By::Function(path) => write!(f, "function `{path}`"),
            By::Route(route) => write!(f, "route `{route}`"),
            By::Call(call) => write!(f, "call `{call}`"),
        }
    }
}

/// What is known of one hold, for the allows to match: its route (`None` outside every
/// response), the call the kernel saw it in, and the held worker's stacks — or why they are
/// not read.
pub(crate) struct Hold<'a> {
    pub(crate) route: Option<&'a str>,
    pub(crate) call: Option<&'a BlockedCall>,
    pub(crate) stacks: Result<Vec<Frames>, String>,
}

/// How the allows fared against a watch's holds: the first that matched each hold, and
/// what each allow that matched nothing could not see.
#[derive(Debug, Default)]
pub(crate) struct Allowances {
    allows: Vec<Allow>,
    matched: Vec<bool>,
    /// Why a function allow could not be matched against a hold, where it could not.
    unseen: Vec<Option<String>>,
}

impl Allowances {
    pub(crate) fn new(allows: Vec<Allow>) -> Allowances {
        let n = allows.len();
        Allowances {
            allows,
            matched: vec![false; n],
            unseen: vec![None; n],
        }
    }

    /// Whether no allow was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.allows.is_empty()
    }

    /// The first allow that matches `hold`, counted as matched.
    pub(crate) fn matching(&mut self, hold: &Hold<'_>) -> Option<Allow> {
        for (k, allow) in self.allows.iter().enumerate() {
            let matched = match &allow.0 {
                By::Route(route) => hold.route.is_some_and(|name| route_is(route, name)),
                By::Call(call) => hold.call.is_some_and(|seen| call_name(seen) == call),
                By::Function(path) => match &hold.stacks {
                    Ok(stacks) if stacks.is_empty() => {
                        self.unseen[k].get_or_insert_with(|| {
                            "no stack of a hold was read (no sample caught the worker in it)"
                                .to_string()
                        });
                        false
                    }
                    Ok(stacks) => stacks.iter().any(|frames| {
                        frames
                            .0
                            .iter()
                            .any(|frame| under(&frame.function_name(), path))
                    }),
                    Err(why) => {
                        self.unseen[k].get_or_insert_with(|| why.clone());
                        false
                    }
                },
            };
            if matched {
                self.matched[k] = true;
                return Some(allow.clone());
            }
        }
        None
    }

    /// A sentence for each allow that matched no hold: one whose function no held worker's
    /// stack had, one that could not be matched (and why), one whose route or call held
    /// nothing.
    pub(crate) fn unmatched(&self) -> Vec<String> {
        self.allows
            .iter()
            .zip(&self.matched)
            .zip(&self.unseen)
            .filter(|((_, matched), _)| !**matched)
            .map(|((allow, _), unseen)| match (&allow.0, unseen) {
                (By::Function(_), Some(why)) => {
                    format!(
                        "allowed {allow}: could not be matched, so nothing was allowed by it: {why}"
                    )
                }
                (By::Function(_), None) => {
                    format!("allowed {allow}: no held worker's stack had it")
                }
                _ => format!("allowed {allow}: nothing it names held a worker"),
            })
            .collect()
    }
}

/// Whether `allowed` (`GET /metrics`, or `/metrics` for any method) names route `name`.
fn route_is(allowed: &str, name: &str) -> bool {
    allowed == name
        || name
            .split_once(' ')
            .is_some_and(|(_, path)| path == allowed)
}

/// Whether `function` is `path` or under it (`shop::config::load` under `shop::config`).
fn under(function: &str, path: &str) -> bool {
    function
        .strip_prefix(path)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// A call's name as a report gives it, without its parentheses: `fdatasync`, `futex`.
fn call_name(call: &BlockedCall) -> &str {
    match call {
        BlockedCall::Socket { call, .. } | BlockedCall::File { call, .. } => call,
        BlockedCall::Other(call) => call,
        BlockedCall::Lock => "futex",
        BlockedCall::Sleep => "clock_nanosleep",
        BlockedCall::Fault => "page fault",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::Frame;

    fn frames(functions: &[&str]) -> Frames {
        Frames(
            functions
                .iter()
                .map(|f| Frame {
                    function: f.to_string(),
                    file: None,
                    line: None,
                })
                .collect(),
        )
    }

    #[test]
    fn a_function_is_matched_by_its_path_and_whats_under_it() {
        let sync = BlockedCall::File {
            call: "fdatasync",
            path: "/tmp/audit.log".into(),
        };
        let hold = Hold {
            route: Some("GET /items/{id}"),
            call: Some(&sync),
            stacks: Ok(vec![frames(&[
                "fdatasync",
                "<std::fs::File>::sync_data",
                "shop::audit::append::{{closure}}",
                "tokio::runtime::task::harness::poll",
            ])]),
        };
        for allow in [
            Allow::function("shop::audit"),
            Allow::function("shop::audit::append"),
            Allow::function("shop"),
            Allow::route("GET /items/{id}"),
            Allow::route("/items/{id}"),
            Allow::call("fdatasync()"),
        ] {
            let mut allowances = Allowances::new(vec![allow.clone()]);
            assert_eq!(allowances.matching(&hold), Some(allow));
            assert!(allowances.unmatched().is_empty());
        }
        for allow in [
            Allow::function("shop::aud"),
            Allow::function("shop::config"),
            Allow::route("POST /items/{id}"),
            Allow::call("fsync"),
        ] {
            let mut allowances = Allowances::new(vec![allow.clone()]);
            assert_eq!(allowances.matching(&hold), None, "{allow}");
            assert_eq!(allowances.unmatched().len(), 1);
        }
    }

    #[test]
    fn a_function_is_never_allowed_where_the_stack_is_not_read() {
        let hold = Hold {
            route: Some("GET /report"),
            call: Some(&BlockedCall::Sleep),
            stacks: Err("where in the code is not read here: the portable build".into()),
        };
        let mut allowances = Allowances::new(vec![Allow::function("shop")]);
        assert_eq!(allowances.matching(&hold), None);
        let said = allowances.unmatched();
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("could not be matched"), "{said:?}");
        assert!(said[0].contains("portable build"), "{said:?}");
    }
}
