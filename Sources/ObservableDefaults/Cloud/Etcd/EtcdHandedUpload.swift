import Foundation

/// An upload a writing thread sent itself (see ``EtcdSync/upload()``), handed to the sync thread, which
/// reads its answer and takes it in as every other upload's: the pending write of `key` being uploaded,
/// the key's earlier upload whose outcome is unknown, and the request on its way.
struct EtcdHandedUpload: @unchecked Sendable {  // passed from the writing thread to the sync thread under the control's lock
    let key: String
    let write: PendingWrite
    let unanswered: PendingWrite?
    let sent: (endpoint: URL, request: EtcdHTTP.SentRequest)
}
