// Intentionally empty: SwiftPM needs one source file for a C target.
