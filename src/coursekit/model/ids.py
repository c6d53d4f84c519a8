"""The shapes of the course's ids (docs/format.md), defined once for the loader and the rules.

A book is "0" (the apparatus) or a Roman numeral; a chapter is <BOOK>.<N> with N from 1 and no
leading zero; an apparatus entry is 0.<AREA>.<NN>.
"""

from __future__ import annotations

import re

BOOK_ID = re.compile(r"^(0|[IVXLC]+)$")
CHAPTER_ID = re.compile(r"^(?P<book>[IVXLC]+)\.(?P<n>[1-9][0-9]*)$")
APPARATUS_ID = re.compile(r"^0\.(?P<area>[A-Z]{2,4})\.(?P<nn>[0-9]{2})$")
