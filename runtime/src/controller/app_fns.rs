//! The app's functions a controller declaration names besides its handler: `reconcile_all_on:
//! ops::config_changes` (a stream whose items reconcile every object) and `backoff: ops::my_backoff` (the
//! delay of each retry). The code `app!` generates passes them through these traits, so a function of the
//! wrong shape is reported at its path with the shape it needs (PCL0075, PCL0076).

use std::time::Duration;

use futures::Stream;

use super::backoff::Backoff;
use super::handler::HandlerError;
use super::options::ControllerOptions;
use super::triggers::Trigger;

/// A function for `reconcile_all_on:`: `fn() -> impl Stream<Item = ()> + Send + 'static`.
#[diagnostic::on_unimplemented(
    message = "PCL0075: `{Self}` is not a `reconcile_all_on` function",
    label = "this does not give a stream of `()`",
    note = "a `reconcile_all_on` function takes nothing and gives the stream: `fn config_changes() -> impl futures::Stream<Item = ()> + Send + 'static`; each item reconciles every object of the controller",
    note = "see `piceli explain PCL0075`"
)]
pub trait ReconcileAllOn<S>: Send + Sync + 'static {
    /// The trigger the options hold.
    fn into_trigger(self) -> Trigger;
}

impl<F, S> ReconcileAllOn<S> for F
where
    F: Fn() -> S + Send + Sync + 'static,
    S: Stream<Item = ()> + Send + 'static,
{
    fn into_trigger(self) -> Trigger {
        Trigger::new(self)
    }
}

/// A function for `backoff:`: `fn(&HandlerError, u32) -> Duration`.
#[diagnostic::on_unimplemented(
    message = "PCL0076: `{Self}` is not a `backoff` function",
    label = "this is not `fn(&HandlerError, u32) -> Duration`",
    note = "a `backoff` function gives the delay before the next reconcile of an object that failed: `fn my_backoff(error: &piceli::controller::HandlerError, attempt: u32) -> std::time::Duration` (`attempt` 1 is the first failure in a row)",
    note = "or declare the exponential one: `backoff: {{ base: \"200ms\", max: \"5m\" }}`; see `piceli explain PCL0076`"
)]
pub trait BackoffFn: Send + Sync + 'static {
    /// The backoff the options hold.
    fn into_backoff(self) -> Backoff;
}

impl<F> BackoffFn for F
where
    F: Fn(&HandlerError, u32) -> Duration + Send + Sync + 'static,
{
    fn into_backoff(self) -> Backoff {
        Backoff::function(self)
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
pub fn backoff_fn(options: ControllerOptions, f: impl BackoffFn) -> ControllerOptions {
    options.backoff(f.into_backoff())
}
