//! The app's functions a controller declaration names besides its handler: `reconcile_all_on:
//! ops::config_changes` (a stream whose items reconcile every object) and `backoff: ops::my_backoff` (the
//! delay of each retry). The code `app!` generates passes them through these traits, so a function of the
//! wrong shape is reported at its path with the shape it needs (PCL0075, PCL0076).

use std::time::Duration;

use futures::{Stream, StreamExt};

use super::backoff::Backoff;
use super::handler::HandlerError;
use super::options::ControllerOptions;
use super::triggers::Trigger;

/// Marks a function giving the stream.
pub struct StreamFn<S>(std::marker::PhantomData<S>);
/// Marks an `async` function giving the stream.
pub struct AsyncStreamFn<Fut>(std::marker::PhantomData<Fut>);
/// Marks a backoff function of the error and the attempt.
pub struct ErrorAndAttempt;
/// Marks a backoff function of the attempt alone.
pub struct AttemptOnly;

/// A function for `reconcile_all_on:`: `fn() -> impl Stream<Item = ()> + Send + 'static`, or an `async fn`
/// giving such a stream.
#[diagnostic::on_unimplemented(
    message = "PCL0075: `{Self}` is not a `reconcile_all_on` function",
    label = "this does not give a stream of `()`",
    note = "a `reconcile_all_on` function takes nothing and gives the stream: `fn config_changes() -> impl piceli::controller::Stream<Item = ()> + Send + 'static` (or an `async fn` giving it); each item reconciles every object of the controller",
    note = "see `piceli explain PCL0075`"
)]
pub trait ReconcileAllOn<Marker>: Send + Sync + 'static {
    /// The trigger the options hold.
    fn into_trigger(self) -> Trigger;
}

impl<F, S> ReconcileAllOn<StreamFn<S>> for F
where
    F: Fn() -> S + Send + Sync + 'static,
    S: Stream<Item = ()> + Send + 'static,
{
    fn into_trigger(self) -> Trigger {
        Trigger::new(self)
    }
}

impl<F, Fut, S> ReconcileAllOn<AsyncStreamFn<Fut>> for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = S> + Send + 'static,
    S: Stream<Item = ()> + Send + 'static,
{
    fn into_trigger(self) -> Trigger {
        Trigger::new(move || futures::stream::once(self()).flatten())
    }
}

/// A function for `backoff:`: `fn(&HandlerError, u32) -> Duration`, or `fn(u32) -> Duration` of the
/// attempt alone.
#[diagnostic::on_unimplemented(
    message = "PCL0076: `{Self}` is not a `backoff` function",
    label = "this is not `fn(&HandlerError, u32) -> Duration`",
    note = "a `backoff` function gives the delay before an object that failed is reconciled again: `fn my_backoff(error: &piceli::controller::HandlerError, attempt: u32) -> std::time::Duration`, or `fn(attempt: u32) -> Duration` (`attempt` 1 is the first failure in a row)",
    note = "or declare the exponential one: `backoff: {{ base: \"200ms\", max: \"5m\" }}`; see `piceli explain PCL0076`"
)]
pub trait BackoffFn<Marker>: Send + Sync + 'static {
    /// The backoff the options hold.
    fn into_backoff(self) -> Backoff;
}

impl<F> BackoffFn<ErrorAndAttempt> for F
where
    F: Fn(&HandlerError, u32) -> Duration + Send + Sync + 'static,
{
    fn into_backoff(self) -> Backoff {
        Backoff::function(self)
    }
}

impl<F> BackoffFn<AttemptOnly> for F
where
    F: Fn(u32) -> Duration + Send + Sync + 'static,
{
    fn into_backoff(self) -> Backoff {
        Backoff::function(move |_, attempt| self(attempt))
    }
}

/// `options` with `f`'s stream as its `reconcile_all_on` (what `app!` generates).
pub fn reconcile_all_on<S>(
    options: ControllerOptions,
    f: impl ReconcileAllOn<S>,
) -> ControllerOptions {
    options.reconcile_all_on(f.into_trigger())
}

/// `options` with `f` as its backoff (what `app!` generates).
pub fn backoff_fn<M>(options: ControllerOptions, f: impl BackoffFn<M>) -> ControllerOptions {
    options.backoff(f.into_backoff())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn changes() -> impl Stream<Item = ()> + Send + 'static {
        futures::stream::iter([(), ()])
    }

    async fn remote() -> impl Stream<Item = ()> + Send + 'static {
        futures::stream::iter([(), (), ()])
    }

    #[tokio::test]
    async fn a_function_or_an_async_function_gives_a_new_stream_for_each_watch() {
        let sync = reconcile_all_on(ControllerOptions::default(), changes);
        let trigger = sync.reconcile_all_on.expect("a trigger");
        assert_eq!(trigger.stream().count().await, 2);
        assert_eq!(
            trigger.stream().count().await,
            2,
            "a fresh stream each time"
        );
        let async_ = reconcile_all_on(ControllerOptions::default(), remote);
        let trigger = async_.reconcile_all_on.expect("a trigger");
        assert_eq!(trigger.stream().count().await, 3);
    }

    #[test]
    fn a_backoff_of_the_error_and_the_attempt_or_of_the_attempt_alone() {
        let e = HandlerError("409 conflict".into());
        let both = backoff_fn(ControllerOptions::default(), |e: &HandlerError, n: u32| {
            Duration::from_millis(if e.0.contains("409") { 10 } else { 99 } * u64::from(n))
        });
        assert_eq!(both.backoff.delay(&e, 3, 0.5), Duration::from_millis(30));
        let attempt = backoff_fn(ControllerOptions::default(), |n: u32| {
            Duration::from_secs(u64::from(n))
        });
        assert_eq!(attempt.backoff.delay(&e, 2, 0.5), Duration::from_secs(2));
    }
}
