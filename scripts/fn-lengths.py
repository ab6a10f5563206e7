#!/usr/bin/env python3
"""Functions by length in src/ (Rust): each `fn` item from its signature
line to its closing brace, counted by brace depth over text with comments,
strings and char literals blanked. Skips `#[cfg(test)]` modules and
`tests.rs` files. Usage: scripts/fn-lengths.py [MIN] [DIR...]
(default 80, src/); prints LINES PATH:LINE NAME, longest first, then
how many are over 80 and over 150."""
import re, sys, pathlib

def blank(text):
    """Comments, strings and char literals replaced by spaces (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith('/*', j): depth += 1; j += 2
                elif text.startswith('*/', j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and (i == 0 or not (text[i-1].isalnum() or text[i-1] == '_')):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j + 1])); i = j + 1
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])):
            out.append(' ' * m.end()); i += m.end()
        else:
            out.append(c); i += 1
    return ''.join(out)

FN = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)')

def functions(path):
    raw = path.read_text()
    text = blank(raw)
    lines = text.split('\n')
    rawlines = raw.split('\n')
    depth, stack, skip_below, out = 0, [], None, []
    pending_test = False
    for no, line in enumerate(lines, 1):
        if re.search(r'#\[cfg\(test\)\]', rawlines[no - 1]):
            pending_test = True
        m = FN.match(line)
        if m and skip_below is None:
            stack.append((m.group(1), no, depth))
        if pending_test and re.match(r'\s*(pub\s+)?mod\s+\w+\s*\{', line):
            skip_below, pending_test = depth, False
        for ch in line:
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
                if skip_below is not None and depth == skip_below:
                    skip_below = None
                while stack and depth == stack[-1][2] and ch == '}':
                    name, start, _ = stack.pop()
                    out.append((no - start + 1, f'{path}:{start}', name))
                    break
        # A declaration without a body (`fn f();` in a trait or extern).
        if stack and stack[-1][1] == no or (stack and line.rstrip().endswith(';') and depth == stack[-1][2]):
            if stack[-1][2] == depth and line.rstrip().endswith(';') and '{' not in lines[stack[-1][1]-1:no][0][:0]:
                # only when no brace opened since its start
                seg = '\n'.join(lines[stack[-1][1] - 1:no])
                if '{' not in seg:
                    stack.pop()
    return out

def main():
    least = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    dirs = sys.argv[2:] or ['src']
    found = []
    for d in dirs:
        for p in sorted(pathlib.Path(d).rglob('*.rs')):
            if p.name == 'tests.rs':
                continue
            found += functions(p)
    found.sort(reverse=True)
    for n, where, name in found:
        if n > least:
            print(f'{n:5} {where} {name}')
    print(f'over 80: {sum(n > 80 for n, *_ in found)}; over 150: {sum(n > 150 for n, *_ in found)}')

main()
