//! A request's progress notifications, sent where clients look for them: in the order
//! they were made, and every one handed to the transport before the request's result.
//!
//! rmcp puts a progress notification on the stream of the request whose progress token
//! it carries (2025 era: that request's own SSE stream; 2026-07-28: the request's
//! answer, which becomes a stream) — but only while the request is open. A notification
//! sent from a spawned task of its own may reach the transport after the result: rmcp
//! then sends it on the session's standing GET stream, where clients report "progress
//! for an unknown token" (2025 era), or drops it with the closed answer (2026-07-28: the
//! last "6 of 6" never arrived). So one [`Notifier`] per request sends its notifications
//! one at a time from a single task, and the request's handler awaits
//! [`Notifier::flush`] before it returns its result: rmcp hands both to one ordered
//! channel, notifications first.
//!
//! Invariants: notifications leave in the order made; after `flush` nothing more is
//! sent for the request (a late one — a queue position reported as the answer arrived —
//! is dropped, never sent after the result); after the client cancelled the request
//! (`notifications/cancelled`) nothing more is sent either, made before or after: the
//! client has forgotten the token and would report each as "progress for an unknown
//! token"; `flush` waits at most [`FLUSH_WITHIN`].
//!
//! What this module does not do: decide what progress says (the call layer reports a
//! queue position, `search` the platforms answered).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::call::{Progress, Report};

/// How long a result waits at most for its notifications to be handed over (a client
/// that stopped reading its stream must not hold the result).
const FLUSH_WITHIN: Duration = Duration::from_secs(5);

/// The progress of one request that carries a progress token.
pub struct Notifier {
    token: ProgressToken,
    /// `None` once flushed: what is made later is dropped.
    tx: Arc<Mutex<Option<mpsc::UnboundedSender<ProgressNotificationParam>>>>,
    /// Sends them, in order.
    sending: tokio::task::JoinHandle<()>,
}

impl Notifier {
    /// The notifier of `context`'s request, when the client asked for progress.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Notifier> {
        let token = context.meta.get_progress_token()?;
        Some(Notifier::new(token, context.peer.clone(), context.ct.clone()))
    }

    fn new(token: ProgressToken, peer: Peer<RoleServer>, cancelled: CancellationToken) -> Notifier {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressNotificationParam>();
        let sending = tokio::spawn(async move {
            while let Some(param) = rx.recv().await {
                if cancelled.is_cancelled() {
                    // The client cancelled: what is still queued is dropped with the rest.
                    break;
                }
                // A client gone away is no reason to stop the call; its result fails alike.
                let _ = peer.notify_progress(param).await;
            }
        });
        Notifier {
            token,
            tx: Arc::new(Mutex::new(Some(tx))),
            sending,
        }
    }

    /// A function that sends one notification (progress, total, message); a no-op
    /// after [`Notifier::flush`].
    fn sender(&self) -> impl Fn(f64, Option<f64>, String) + Send + Sync + 'static {
        let (token, tx) = (self.token.clone(), Arc::clone(&self.tx));
        move |progress, total, message| {
            let mut param = ProgressNotificationParam::new(token.clone(), progress).with_message(message);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if let Some(tx) = tx.lock().expect("progress sender lock").as_ref() {
                let _ = tx.send(param);
            }
        }
    }

    /// Where a tool call's reports go: its place in a platform's queue, one notification
    /// per report numbered from 1; `search`'s platforms answered, as done of total.
    pub fn progress(&self) -> Progress {
        let send = self.sender();
        let step = AtomicU32::new(0);
        Arc::new(move |report: Report| match report {
            Report::Queued(platform, position) => {
                let step = step.fetch_add(1, Ordering::Relaxed) + 1;
                send(
                    f64::from(step),
                    None,
                    format!(
                        "waiting for {}: {} call(s) queued by {} session(s), about {} s",
                        platform.display_name(),
                        position.queued_calls,
                        position.waiting_sessions,
                        position.estimated_wait.as_secs_f64().ceil()
                    ),
                );
            }
            Report::Answered { done, of, message } => send(f64::from(done), Some(f64::from(of)), message),
        })
    }

    /// Hands every notification made so far to the transport, and stops sending: call
    /// it before returning the request's result.
    pub async fn flush(self) {
        drop(self.tx.lock().expect("progress sender lock").take());
        let mut sending = self.sending;
        if tokio::time::timeout(FLUSH_WITHIN, &mut sending).await.is_err() {
            sending.abort();
            tracing::debug!("progress notifications not handed over in time; dropped");
        }
    }
}

/// Flushes `notifier`, if there is one.
pub async fn flush(notifier: Option<Notifier>) {
    if let Some(n) = notifier {
        n.flush().await;
    }
}
