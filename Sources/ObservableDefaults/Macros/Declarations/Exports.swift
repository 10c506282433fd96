@_exported import Observation

/// `Observation.Observable` under a name no user type can shadow, for the conformance the macro adds.
/// Implementation detail of the macros; not API.
public typealias _DefaultsObservable = Observation.Observable
