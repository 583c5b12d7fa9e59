"""What the Room can run: its rules, the run check in embedded V8, stored verdicts, the frame."""
