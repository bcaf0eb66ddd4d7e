//! The handler styles a webhook accepts — async fns, sync fns, and `Validate`/`Mutate` trait impls — and
//! their type-erased form the server calls.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use super::mutation::{IntoMutation, Mutation};
use super::request::{AdmissionObject, Request};
use super::verdict::{IntoVerdict, Verdict};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// An erased handler: the request in, the answer (or the handler's failure) out.
type ErasedFn<T, A> = Arc<dyn Fn(Request<T>) -> BoxFuture<Result<A, String>> + Send + Sync>;

/// A validating webhook as a type (the knete class style). Write the method as a plain `async fn`:
///
/// ```
/// use piceli_runtime::webhook::{Request, Validate, Verdict};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// pub struct NoSecrets;
/// impl Validate for NoSecrets {
///     type Resource = ConfigMap;
///     async fn validate(&self, req: Request<ConfigMap>) -> Verdict {
///         match req.object().data.as_ref().is_some_and(|d| d.contains_key("password")) {
///             true => Verdict::deny("passwords belong in a Secret"),
///             false => Verdict::allow(),
///         }
///     }
/// }
/// ```
pub trait Validate: Send + Sync + 'static {
    /// The resource type this webhook is registered for.
    type Resource: AdmissionObject;
    /// Decides on one request.
    fn validate(&self, req: Request<Self::Resource>) -> impl Future<Output = Verdict> + Send;
}

/// A mutating webhook as a type (the knete class style); write the method as a plain `async fn`.
pub trait Mutate: Send + Sync + 'static {
    /// The resource type this webhook is registered for.
    type Resource: AdmissionObject;
    /// Changes (or refuses) one request's object.
    fn mutate(&self, req: Request<Self::Resource>) -> impl Future<Output = Mutation> + Send;
}

/// A validating handler, type-erased: what [`Webhooks`](super::Webhooks) stores.
pub struct Validator<T: kube::Resource> {
    pub(crate) call: ErasedFn<T, Verdict>,
}

/// A mutating handler, type-erased; build one with [`mutator`] to list handlers of different types in a
/// composite (`[mutator(a), mutator(b)]`).
pub struct Mutator<T: kube::Resource> {
    /// The handler's Rust path (for failure messages).
    pub(crate) label: &'static str,
    pub(crate) call: ErasedFn<T, Mutation>,
}

impl<T: kube::Resource> Clone for Mutator<T> {
    fn clone(&self) -> Self {
        Mutator {
            label: self.label,
            call: self.call.clone(),
        }
    }
}

/// Marks an `async fn(Request<T>) -> R` handler (type inference picks it; never named by users).
pub struct AsyncFn<Fut>(PhantomData<Fut>);
/// Marks a plain `fn(Request<T>) -> R` handler.
pub struct SyncFn<R>(PhantomData<R>);
/// Marks a [`Validate`] or [`Mutate`] impl.
pub struct TraitImpl;
/// Marks an already erased [`Mutator`].
pub struct Erased;

/// Anything that can be registered as a validating handler for `T`: `async fn(Request<T>) -> Verdict`,
/// `fn(Request<T>) -> Verdict` (either may return `Result<Verdict, E>`), or a [`Validate`] impl.
#[diagnostic::on_unimplemented(
    message = "PCL0065: `{Self}` is not a validating webhook handler for `{T}`",
    label = "this handler does not take a `Request<{T}>` and answer a `Verdict`",
    note = "a validating handler is `async fn(Request<{T}>) -> Verdict`, `fn(Request<{T}>) -> Verdict` (or `-> Result<Verdict, E>`), or a type implementing `piceli::webhook::Validate<Resource = {T}>`",
    note = "`{T}` is the type of the resource the webhook is declared on (`kube::core::DynamicObject` when it is on a list of resources or a wildcard); see `piceli explain PCL0065`"
)]
pub trait ValidateHandler<T: AdmissionObject, Marker>: Send + Sync + 'static {
    /// The erased form.
    fn into_validator(self) -> Validator<T>;
}

/// Anything that can be registered as a mutating handler for `T`: `async fn(Request<T>) -> Mutation`,
/// `fn(Request<T>) -> Mutation` (either may return `Result<Mutation, E>`), a [`Mutate`] impl, or a
/// [`Mutator`].
#[diagnostic::on_unimplemented(
    message = "PCL0065: `{Self}` is not a mutating webhook handler for `{T}`",
    label = "this handler does not take a `Request<{T}>` and answer a `Mutation`",
    note = "a mutating handler is `async fn(Request<{T}>) -> Mutation`, `fn(Request<{T}>) -> Mutation` (or `-> Result<Mutation, E>`), or a type implementing `piceli::webhook::Mutate<Resource = {T}>`",
    note = "`{T}` is the type of the resource the webhook is declared on (`kube::core::DynamicObject` when it is on a list of resources or a wildcard); see `piceli explain PCL0065`"
)]
pub trait MutateHandler<T: AdmissionObject, Marker>: Send + Sync + 'static {
    /// The erased form.
    fn into_mutator(self) -> Mutator<T>;
}

impl<T, F, Fut> ValidateHandler<T, AsyncFn<Fut>> for F
where
    T: AdmissionObject,
    F: Fn(Request<T>) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoVerdict,
{
    fn into_validator(self) -> Validator<T> {
        Validator {
            call: Arc::new(move |req| {
                let fut = self(req);
                Box::pin(async move { fut.await.into_verdict() })
            }),
        }
    }
}

impl<T, F, R> ValidateHandler<T, SyncFn<R>> for F
where
    T: AdmissionObject,
    F: Fn(Request<T>) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    fn into_validator(self) -> Validator<T> {
        Validator {
            call: Arc::new(move |req| {
                let out = self(req).into_verdict();
                Box::pin(std::future::ready(out))
            }),
        }
    }
}

impl<V: Validate> ValidateHandler<V::Resource, TraitImpl> for V {
    fn into_validator(self) -> Validator<V::Resource> {
        let handler = Arc::new(self);
        Validator {
            call: Arc::new(move |req| {
                let handler = handler.clone();
                Box::pin(async move { Ok(handler.validate(req).await) })
            }),
        }
    }
}

impl<T, F, Fut> MutateHandler<T, AsyncFn<Fut>> for F
where
    T: AdmissionObject,
    F: Fn(Request<T>) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoMutation,
{
    fn into_mutator(self) -> Mutator<T> {
        Mutator {
            label: std::any::type_name::<F>(),
            call: Arc::new(move |req| {
                let fut = self(req);
                Box::pin(async move { fut.await.into_mutation() })
            }),
        }
    }
}

impl<T, F, R> MutateHandler<T, SyncFn<R>> for F
where
    T: AdmissionObject,
    F: Fn(Request<T>) -> R + Send + Sync + 'static,
    R: IntoMutation,
{
    fn into_mutator(self) -> Mutator<T> {
        Mutator {
            label: std::any::type_name::<F>(),
            call: Arc::new(move |req| {
                let out = self(req).into_mutation();
                Box::pin(std::future::ready(out))
            }),
        }
    }
}

impl<M: Mutate> MutateHandler<M::Resource, TraitImpl> for M {
    fn into_mutator(self) -> Mutator<M::Resource> {
        let handler = Arc::new(self);
        Mutator {
            label: std::any::type_name::<M>(),
            call: Arc::new(move |req| {
                let handler = handler.clone();
                Box::pin(async move { Ok(handler.mutate(req).await) })
            }),
        }
    }
}

impl<T: AdmissionObject> ValidateHandler<T, Erased> for Validator<T> {
    fn into_validator(self) -> Validator<T> {
        self
    }
}

/// Erases one validating handler (what the code generated by `app!` registers, typed by the resource).
pub fn validator<T: AdmissionObject, M>(handler: impl ValidateHandler<T, M>) -> Validator<T> {
    handler.into_validator()
}

impl<T: AdmissionObject> MutateHandler<T, Erased> for Mutator<T> {
    fn into_mutator(self) -> Mutator<T> {
        self
    }
}

/// Erases one mutating handler, so that handlers of different types fit in one list.
pub fn mutator<T: AdmissionObject, M>(handler: impl MutateHandler<T, M>) -> Mutator<T> {
    handler.into_mutator()
}

/// The mutators of a composite webhook, run in order: a tuple of handlers (`(add_team, add_tier)`), or a
/// list of [`Mutator`]s (`[mutator(add_team), mutator(add_tier)]`, a `Vec`).
pub trait MutatorChain<T: AdmissionObject, Marker> {
    /// The mutators, in order.
    fn into_mutators(self) -> Vec<Mutator<T>>;
}

impl<T: AdmissionObject> MutatorChain<T, Erased> for Vec<Mutator<T>> {
    fn into_mutators(self) -> Vec<Mutator<T>> {
        self
    }
}

impl<T: AdmissionObject, const N: usize> MutatorChain<T, Erased> for [Mutator<T>; N] {
    fn into_mutators(self) -> Vec<Mutator<T>> {
        self.into()
    }
}

macro_rules! tuple_chain {
    ($($h:ident $m:ident),+) => {
        impl<T: AdmissionObject, $($h, $m),+> MutatorChain<T, ($($m,)+)> for ($($h,)+)
        where
            $($h: MutateHandler<T, $m>),+
        {
            #[allow(non_snake_case)]
            fn into_mutators(self) -> Vec<Mutator<T>> {
                let ($($h,)+) = self;
                vec![$($h.into_mutator()),+]
            }
        }
    };
}

tuple_chain!(A MA);
tuple_chain!(A MA, B MB);
tuple_chain!(A MA, B MB, C MC);
tuple_chain!(A MA, B MB, C MC, D MD);
tuple_chain!(A MA, B MB, C MC, D MD, E ME);
tuple_chain!(A MA, B MB, C MC, D MD, E ME, F MF);
tuple_chain!(A MA, B MB, C MC, D MD, E ME, F MF, G MG);
tuple_chain!(A MA, B MB, C MC, D MD, E ME, F MF, G MG, H MH);
