import UnwindCore
import UnwindSeams

/// The five slot files in the state directory, for the panic page and the maintainer's commands.
/// Deleting a slot writes an empty file (an empty file is an empty slot), so every change is one
/// atomic replace.
public enum AlertSlotStore {
    /// Slots 1…5, in order. A file that cannot be read or fails validation is `needsAttention`;
    /// the other slots are unaffected.
    public static func load(from store: StateStore) -> [AlertSlotState] {
        (1...AlertSlotFile.slotCount).map { slot in
            do {
                return AlertSlotState(file: try store.read(AlertSlotFile.name(slot: slot)))
            } catch {
                return .needsAttention(.unreadable("\(error)"))
            }
        }
    }

    /// Writes a validated alert to its slot (atomic, durable on return).
    public static func save(_ alert: AlertSlot, slot: Int, to store: StateStore) throws(StoreError) {
        try store.replace(AlertSlotFile.name(slot: slot), with: Array(AlertSlotFile.format(alert).utf8))
    }

    /// Empties a slot.
    public static func clear(slot: Int, in store: StateStore) throws(StoreError) {
        try store.replace(AlertSlotFile.name(slot: slot), with: [])
    }

    /// The alerts PANIC sends: every ready slot, in slot order.
    public static func panicAlerts(_ slots: [AlertSlotState]) -> [(slot: Int, alert: AlertSlot)] {
        slots.enumerated().compactMap { i, s in s.alert.map { (slot: i + 1, alert: $0) } }
    }
}
