#if canImport(FoundationEssentials)
    import FoundationEssentials
#elseif canImport(Foundation)
    import Foundation
#endif

#if canImport(FoundationEssentials) || canImport(Foundation)
    extension CBORError: LocalizedError {
        public var errorDescription: String? { description }
    }
#endif
