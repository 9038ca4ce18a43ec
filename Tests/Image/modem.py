#!/usr/bin/env python3
"""A GSM modem for the image's boot test: the far end of the emulated machine's virtual serial
port (qemu's chardev, a UNIX socket), answering the AT commands a SIM800-class modem answers.

It records what "the network" accepted: one line per AT+CMGS with the destination number
decoded from the PDU, in the log given by --log:
    READY                      the device asked for the PIN status (its modem bring-up began)
    CMGS <number> <pdu-hex>    a submit the network took (+CMGS: <ref> and OK were sent)
    HELD <number>              a submit held without an answer (--hold-submits), as a network
                               that has not confirmed yet
    REFUSED <number>           a submit refused while the modem was not registered yet
                               (+CMS ERROR: 331, no network service)
    REGISTERED                 the modem registered (--register-after), logged before the next
                               command it answers
--hold-submits N keeps the first N submits unanswered (the device's outbox must resend them
after a power cut). --register-after S: for S seconds after the bring-up began the modem is
still looking for a network ("+CREG: 0,2", searching) and the network takes no submit, as after
a power cut; --register-when FILE: and not before FILE exists (the test makes it once it has
seen what it needs of the device before the registration, however slow the machine). Reconnects
when the emulated machine restarts. Ends on SIGTERM.
"""
import argparse, os, socket, sys, time

def destination(pdu_hex):
    b = bytes.fromhex(pdu_hex)
    i = 1 + b[0]          # the service centre's length, then its bytes
    i += 1                # first octet of the SMS-SUBMIT
    i += 1                # TP-MR
    digits, ton = b[i], b[i + 1]
    semi = b[i + 2:i + 2 + (digits + 1) // 2]
    out = "".join(f"{x & 0xF:x}{x >> 4:x}" for x in semi)[:digits]
    return ("+" if ton == 0x91 else "") + out

ANSWERS = {
    "AT": [], "ATE0": [], "AT+CMEE=1": [], "AT+CMGF=0": [], "AT+COPS=0": [],
    "AT+CPIN?": ["+CPIN: READY"], "AT+CSQ": ["+CSQ: 21,0"],
    "AT+CREG?": ["+CREG: 0,1"], "AT+CGREG?": ["+CGREG: 0,1"], "AT+CEREG?": ["+CEREG: 0,1"],
    "AT+COPS?": ['+COPS: 0,0,"Test Network"'], "AT+CSCA?": ['+CSCA: "+447785016005",145'],
    "AT+CSMS?": ["+CSMS: 0,1,1,1"], "AT+CMGL=4": [], "AT+CLCC": [], "AT+CNMA": [],
}

REGISTRATION = ("AT+CREG?", "AT+CGREG?", "AT+CEREG?")

def registered(state):
    if state["register_after"] <= 0:
        return True
    began = state.get("began")
    if state["register_when"] and not os.path.exists(state["register_when"]):
        return False
    return began is not None and time.monotonic() - began >= state["register_after"]

def serve(conn, log, state):
    buf = b""
    def note_registration():
        # Logged at the first command after the registration time passed, before anything
        # the network takes.
        if not state["told"] and registered(state):
            state["told"] = True
            log.write("REGISTERED\n"); log.flush()
    def say(lines, ok=True):
        out = b"".join(b"\r\n" + l.encode() + b"\r\n" for l in lines)
        if ok:
            out += b"\r\nOK\r\n"
        conn.sendall(out)
    while True:
        data = conn.recv(4096)
        if not data:
            return
        buf += data
        while True:
            note_registration()
            if state.get("prompt"):
                end = buf.find(b"\x1a")
                esc = buf.find(b"\x1b")
                if esc != -1 and (end == -1 or esc < end):
                    buf = buf[esc + 1:]; state["prompt"] = False; continue
                if end == -1:
                    break
                pdu = buf[:end].decode(errors="replace").strip()
                buf = buf[end + 1:]
                state["prompt"] = False
                try:
                    number = destination(pdu)
                except Exception:
                    number = "?"
                if not registered(state):
                    log.write(f"REFUSED {number}\n"); log.flush()
                    conn.sendall(b"\r\n+CMS ERROR: 331\r\n")
                    continue
                if state["hold"] > 0:
                    state["hold"] -= 1
                    log.write(f"HELD {number}\n"); log.flush()
                    continue
                state["ref"] = (state["ref"] + 1) % 256
                log.write(f"CMGS {number} {pdu}\n"); log.flush()
                say([f"+CMGS: {state['ref']}"])
                continue
            cr = buf.find(b"\r")
            if cr == -1:
                break
            line = buf[:cr].decode(errors="replace").strip().lstrip("\n")
            buf = buf[cr + 1:].lstrip(b"\n")
            if not line:
                continue
            cmd = line.upper()
            if cmd == "AT+CPIN?":
                log.write("READY\n"); log.flush()
                if state.get("began") is None:
                    state["began"] = time.monotonic()
            if cmd in REGISTRATION and not registered(state):
                say([ANSWERS[cmd][0].replace("0,1", "0,2")])
                continue
            if cmd.startswith("AT+CMGS="):
                state["prompt"] = True
                conn.sendall(b"\r\n> ")
            elif cmd in ANSWERS:
                say(ANSWERS[cmd])
            elif cmd.startswith(("AT+CNMI=", "AT+CPMS=", "AT+CSCA=", "AT+CMGD=", "AT+CFUN")):
                say(['+CPMS: 0,20,0,20,0,20'] if cmd.startswith("AT+CPMS=") else [])
            else:
                say([], ok=False); conn.sendall(b"\r\nERROR\r\n")

def main():
    a = argparse.ArgumentParser()
    a.add_argument("--socket", required=True)
    a.add_argument("--log", required=True)
    a.add_argument("--hold-submits", type=int, default=0)
    a.add_argument("--register-after", type=float, default=0)
    a.add_argument("--register-when", default="")
    o = a.parse_args()
    state = {"prompt": False, "ref": 0, "hold": o.hold_submits, "register_after": o.register_after, "register_when": o.register_when,
             "began": None, "told": o.register_after == 0}
    with open(o.log, "a") as log:
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(o.socket)
            except OSError:
                time.sleep(0.2)   # the emulated machine is not (yet) there: a modem waits for power
                continue
            try:
                serve(s, log, state)
            except OSError:
                pass
            finally:
                s.close()
            state["prompt"] = False

if __name__ == "__main__":
    main()
