"""Sends one mail with Python's smtplib (a real SMTP client) and prints the outcome as JSON:
{"sent": true} or {"refused": CODE, "message": TEXT, "at": "rcpt" | "data"}.

    python3 smtp_send.py PORT FROM TO SUBJECT  (the body is read from stdin)
"""
import json
import smtplib
import sys
from email.message import EmailMessage
from email.utils import make_msgid


def main():
    port, sender, to, subject = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="mail.example")
    msg.set_content(sys.stdin.read())
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=20) as smtp:
            smtp.send_message(msg)
        print(json.dumps({"sent": True}))
    except smtplib.SMTPRecipientsRefused as e:
        code, text = next(iter(e.recipients.values()))
        print(json.dumps({"refused": code, "message": text.decode(), "at": "rcpt"}))
    except smtplib.SMTPDataError as e:
        print(json.dumps({"refused": e.smtp_code, "message": e.smtp_error.decode(), "at": "data"}))


if __name__ == "__main__":
    main()
