#!/usr/bin/env python3
"""Every relative Markdown link in README.md and docs/*.md names a file that exists, and every
#anchor names a heading of its target (GitHub's rule: lower case, punctuation other than '-' and
'_' dropped, spaces to '-', '-N' for the N-th repeat). Usage: check_links.py [SOURCE_DIR]"""
import glob
import os
import re
import sys
import unicodedata


def slug(heading):
    out = []
    for ch in heading.strip().replace('`', '').lower():
        if ch == ' ':
            out.append('-')
        elif ch in '-_' or unicodedata.category(ch)[0] in 'LN':
            out.append(ch)
    return ''.join(out)


def anchors(path):
    found, seen, fenced = set(), {}, False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            found.add(s if n == 0 else f'{s}-{n}')
            seen[s] = n + 1
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
    broken, checked = [], 0
    for f in files:
        text = re.sub(r'```.*?```', '', open(f, encoding='utf-8').read(), flags=re.S)
        for m in re.finditer(r'\[[^\]]*\]\(([^)\s]+)\)', text):
            target = m.group(1)
            if re.match(r'^[a-z]+:', target):  # http:, https:, mailto:
                continue
            checked += 1
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                broken.append(f'{f}: ({target}): no such file')
            elif anchor and (not dest.endswith('.md') or anchor not in anchors(dest)):
                broken.append(f'{f}: ({target}): no heading #{anchor} in {dest}')
    print(f'{checked} relative links in {len(files)} files, {len(broken)} broken')
    for b in broken:
        print('broken:', b)
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
