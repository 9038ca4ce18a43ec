import Foundation
@_exported import UnwindTestSupport

