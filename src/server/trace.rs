//! The layer every served router gets: each response says which thread started its
//! handler, which connection carried it, and what the runtime looked like then.
//!
//! This is what seed 000's server printed for each request, for any router — a user's as
//! much as perfshape's demo — so a verdict about a user's handler can name the worker;
//! and how long the response held that worker ([`Held`]), timed poll by poll: its service
//! future's polls in the [`HELD`] header, and with its body's polls (a compression layer
//! compresses there) in the server's [`Ledger`], found by the [`SEQ`] header. While a claim
//! records, each poll is also split by the worker thread's clocks into computing, waiting
//! and preempted ([`thread_clock`](crate::thread_clock)).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use super::ledger::{Ledger, MAX_SPANS, PollSpan, SPAN_FLOOR, Served};
use crate::local_traffic;
use crate::pool::sampler::{Sampler, Slot, route_key};
use crate::pool::timeline;
use crate::stack::Leaving;
use crate::thread_clock::ThreadReading;
use crate::thread_clock::woken::Wakings;
use crate::vocab::RuntimeFigures;
use crate::vocab::wire::{HELD, Held, PEER, RUNTIME, SEQ, SERVED_BY, Split};

/// Wraps `router` so that every response carries the served-by, peer, runtime, held and
/// sequence headers, and its polls are kept in `ledger` while a claim records.
pub(crate) fn traced(router: axum::Router, ledger: Arc<Ledger>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(ledger, stamp))
}

async fn stamp(State(ledger): State<Arc<Ledger>>, request: Request, next: Next) -> Response {
    // Read before the handler runs: it is polled on this thread, now, and may block it.
    let served_by = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string();
    let figures = runtime_figures();
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    let seq = ledger.next_seq();
    let recording = ledger.recording();
    let (method, path) = (
        request.method().to_string(),
        request.uri().path().to_string(),
    );
    // The route's number in the workers' samples, asked once per request while recording.
    let marks = Marks::Pool(
        recording
            .then(|| timeline::route(&route_key(&method, &path)))
            .flatten(),
    );
    let (mut response, (held, spans)) =
        Timed::new(next.run(request), recording, marks.clone()).await;
    let headers = response.headers_mut();
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    set(SERVED_BY, served_by);
    set(RUNTIME, figures.to_string());
    set(HELD, held.to_string());
    set(SEQ, seq.to_string());
    if let Some(peer) = peer {
        set(PEER, peer.to_string());
    }
    if !recording {
        return response;
    }
    let status = response.status().as_u16();
    let served = Served {
        method,
        path,
        status,
        held,
        spans,
    };
    response.map(|body| {
        Body::new(TimedBody::new(
            body,
            served,
            AtDrop::Keep,
            seq,
            ledger,
            marks,
        ))
    })
}

/// Where a timed poll's thread tells the sampler it is: a served pool's worker, through
/// its timeline (the route's number there, where the pool samples), or any thread polling
/// through a watch layer (a test's own), with the layer's sampler and the route's number
/// there.
#[derive(Clone, Debug)]
pub(crate) enum Marks {
    /// A worker of the served pool.
    Pool(Option<u32>),
    /// A thread polling a watch layer's service.
    Layer(Arc<Sampler>, u32),
}

/// What a timed poll began with, to end it by.
enum Begun {
    Pool(timeline::PollMark),
    Layer(Option<Arc<Slot>>),
}

impl Marks {
    fn begins(&self, start: &ThreadReading) -> Begun {
        match self {
            Marks::Pool(route) => Begun::Pool(timeline::poll_begins(start, *route)),
            Marks::Layer(sampler, route) => {
                let slot = sampler.slot_here();
                if let Some(slot) = &slot {
                    slot.in_route(*route);
                }
                Begun::Layer(slot)
            }
        }
    }
}

impl Marks {
    /// Keeps `left`, the longest sleep in a call of a poll, with the route's samples.
    fn left(&self, left: &crate::stack::Left) {
        match self {
            Marks::Pool(Some(route)) => timeline::left_in(*route, left),
            Marks::Pool(None) => {}
            Marks::Layer(sampler, route) => sampler.left(*route, left),
        }
    }
}

impl Begun {
    /// Ends the poll; whether it handed its worker's core off (`block_in_place`), which
    /// only a served pool's timeline tells.
    fn ends(self, end: &ThreadReading) -> bool {
        match self {
            Begun::Pool(mark) => timeline::poll_ends(mark, end),
            Begun::Layer(slot) => {
                if let Some(slot) = slot {
                    slot.parked();
                }
                false
            }
        }
    }
}

/// The runtime's stable metrics, read on the runtime the caller runs on.
pub(crate) fn runtime_figures() -> RuntimeFigures {
    let metrics = tokio::runtime::Handle::current().metrics();
    RuntimeFigures {
        num_workers: metrics.num_workers(),
        num_alive_tasks: metrics.num_alive_tasks(),
        global_queue_depth: metrics.global_queue_depth(),
    }
}

/// Where a poll's time goes: the response's whole hold, and its spans that held the worker
/// long enough to matter.
struct PollInto<'a> {
    held: &'a mut Held,
    spans: &'a mut Vec<PollSpan>,
}

/// How a poll is read: whether the thread's clocks split it, the marks that cut the
/// worker's timeline, and who woke the task, where a watch records.
struct PollRead<'a> {
    split: bool,
    marks: &'a Marks,
    wakings: &'a Arc<Wakings>,
}

/// One poll, timed into `held`: its wall time, and how it split when `split` says to read
/// the thread's clocks — then a poll that held its worker long enough to matter is kept in
/// `spans` too, with when it began. The same readings cut the worker's run for its
/// timeline (`pool::timeline`): what the worker ran before this poll, since its last
/// boundary, is a segment of it. A poll during which tokio handed the worker's core to
/// another thread (`block_in_place`) did not hold the worker: its time is counted as
/// handed off, not as computing or waiting.
fn timed_poll<T>(
    into: PollInto<'_>,
    read: PollRead<'_>,
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> T,
) -> T {
    // Read before the poll's clocks, and again after them: its `getsockopt`s (≈0.6 µs a
    // followed connection) are no part of the poll's time.
    let PollInto { held, spans } = into;
    let PollRead {
        split,
        marks,
        wakings,
    } = read;
    let traffic = split.then(local_traffic::Traffic::now).flatten();
    let woke = if split { wakings.take() } else { None };
    let noting = if split {
        wakings.waker(cx.waker())
    } else {
        None
    };
    // The kernel hands over the worker's stack at each switch in the poll, outside its
    // clocks (two `ioctl`s): a sleep too short for the sampler's tick is named too. Its
    // event is asked of the kernel at the thread's first recorded poll, outside the
    // worker's run too.
    if split && !Leaving::ready() {
        timeline::own_work(Leaving::prepare);
    }
    let leaving = split.then(Leaving::begin);
    let clocks = if split { ThreadReading::now() } else { None };
    let mark = clocks.as_ref().map(|c| marks.begins(c));
    let started = Instant::now();
    let polled = match &noting {
        Some(waker) => poll(&mut Context::from_waker(waker)),
        None => poll(cx),
    };
    let ended = clocks.zip(mark).zip(ThreadReading::now());
    match ended {
        Some(((clocks, mark), end)) => {
            let time = clocks.until(&end);
            if let Some(left) = leaving.and_then(|l| l.end(time.slept)) {
                marks.left(&left);
            }
            let handed_off = mark.ends(&end);
            let split = if handed_off {
                Split {
                    handed_off: 1,
                    ..Split::default()
                }
            } else {
                if time.computing + time.waiting >= SPAN_FLOOR && spans.len() < MAX_SPANS {
                    spans.push(PollSpan { at: started, time });
                }
                Split {
                    computing: time.computing,
                    waiting: time.waiting,
                    preempted: time.preempted,
                    longest_computing: time.computing,
                    slept: u32::from(time.slept),
                    to_local: u32::from(traffic.is_some_and(|before| before.round_trip_since())),
                    handed_off: 0,
                    held_up: match woke {
                        Some(woke) if !time.waiting.is_zero() => {
                            woke.held_up(started, time.wall, time.waiting)
                        }
                        _ => Duration::ZERO,
                    },
                }
            };
            held.add(time.wall, Some(split));
        }
        None => held.add(started.elapsed(), None),
    }
    polled
}

/// A future whose polls are timed: each poll is time its worker could run nothing else.
pub(crate) struct Timed<F> {
    inner: Pin<Box<F>>,
    held: Held,
    spans: Vec<PollSpan>,
    split: bool,
    /// Where its polls are told to the sampler.
    marks: Marks,
    /// Who woke it last, where a watch records.
    wakings: Arc<Wakings>,
}

impl<F: Future> Timed<F> {
    /// `inner`, its polls timed — and split by the thread's clocks where `split` says.
    pub(crate) fn new(inner: F, split: bool, marks: Marks) -> Self {
        Timed {
            inner: Box::pin(inner),
            held: Held::default(),
            spans: Vec::new(),
            split,
            marks,
            wakings: Arc::default(),
        }
    }
}

impl<F: Future> Future for Timed<F> {
    type Output = (F::Output, (Held, Vec<PollSpan>));

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let polled = timed_poll(
            PollInto {
                held: &mut this.held,
                spans: &mut this.spans,
            },
            PollRead {
                split: this.split,
                marks: &this.marks,
                wakings: &this.wakings,
            },
            cx,
            |cx| this.inner.as_mut().poll(cx),
        );
        match polled {
            Poll::Ready(output) => {
                Poll::Ready((output, (this.held, std::mem::take(&mut this.spans))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// What a timed body does with its response's figures when it is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtDrop {
    /// Keeps the whole response: the served router's ledger, read once its body is
    /// written.
    Keep,
    /// Adds the body's polls to the response kept when its future was ready: a watch
    /// layer's, whose test may still hold the response when the watch decides.
    Amend,
}

/// A response body whose polls are timed on top of its future's, and which keeps the
/// response's figures in the ledger when it is dropped — after its last frame was written,
/// or when its connection went away.
pub(crate) struct TimedBody<B> {
    inner: Pin<Box<B>>,
    served: Option<Served>,
    at_drop: AtDrop,
    seq: u64,
    ledger: Arc<Ledger>,
    marks: Marks,
    /// Who woke it last, where a watch records.
    wakings: Arc<Wakings>,
}

impl<B> TimedBody<B> {
    /// `inner`, its polls timed into `served`, which is kept (or amended) in `ledger` as
    /// response `seq` when the body is dropped.
    pub(crate) fn new(
        inner: B,
        served: Served,
        at_drop: AtDrop,
        seq: u64,
        ledger: Arc<Ledger>,
        marks: Marks,
    ) -> Self {
        TimedBody {
            inner: Box::pin(inner),
            served: Some(served),
            at_drop,
            seq,
            ledger,
            marks,
            wakings: Arc::default(),
        }
    }
}

impl<B: http_body::Body> http_body::Body for TimedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        match &mut this.served {
            Some(served) => timed_poll(
                PollInto {
                    held: &mut served.held,
                    spans: &mut served.spans,
                },
                PollRead {
                    split: true,
                    marks: &this.marks,
                    wakings: &this.wakings,
                },
                cx,
                |cx| this.inner.as_mut().poll_frame(cx),
            ),
            None => this.inner.as_mut().poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for TimedBody<B> {
    fn drop(&mut self) {
        if let Some(served) = self.served.take() {
            match self.at_drop {
                AtDrop::Keep => self.ledger.keep(self.seq, served),
                AtDrop::Amend => self.ledger.amend(self.seq, &served.held, &served.spans),
            }
        }
    }
}
