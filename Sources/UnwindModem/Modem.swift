// The GSM modem: AT engine, PDU encoder, outbox.
