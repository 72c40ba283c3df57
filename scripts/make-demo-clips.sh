#!/usr/bin/env bash
# Regenerates the demo clips in clips/ (spoken reminders and a chime cue).
# Needs espeak-ng and sox: sudo apt-get install -y espeak-ng sox
set -euo pipefail
cd "$(dirname "$0")/../clips"

say() { # id text
    espeak-ng -v en-us -s 150 -w "/tmp/jukebox-$1.wav" "$2"
    # Mono 16-bit 22.05 kHz keeps the files small; a short fade avoids a click at each end.
    sox "/tmp/jukebox-$1.wav" -r 22050 -c 1 -b 16 "$1.wav" fade t 0.01 0 0.02 norm -3
    rm -f "/tmp/jukebox-$1.wav"
}

say water     "Time for a glass of water."
say stretch   "Stand up and stretch for a moment."
say eyes      "Look away from the screen. Find something far away."
say breathe   "Breathe in slowly. And out."
say posture   "Check your posture. Shoulders down, back straight."
say walk      "If you can, take a short walk."
say gratitude "Name one thing that went well today."
# A long one (25 s), to try skip and pause on by hand.
say slow      "Let us slow down for a little while. Drop your shoulders, and unclench your jaw. Breathe in through your nose, slowly, counting to four. Hold it for a moment. Now breathe out through your mouth, counting to six. Once more: in, slowly, and out, even slower. Notice how your body feels now. When you are ready, open your eyes and carry on."

# The cue: two soft bell tones, 0.6 seconds.
sox -n -r 22050 -c 1 -b 16 chime.wav \
    synth 0.6 sine 880 sine 1320 remix 1,2 fade q 0.005 0.6 0.45 norm -6
