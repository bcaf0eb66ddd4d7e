//! The shop's code checks (run after a deploy; the check runner arrives with the checks issue).

/// Places an order through the API and reads it back.
pub async fn orders_flow() {}
