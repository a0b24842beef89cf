// toYAML writes a JSON value as YAML for people to read and edit (the API
// reads YAML back): plain scalars where YAML reads them back the same,
// quoted otherwise, multi-line strings as literal blocks.

// plain are strings YAML reads back as the same string when unquoted.
const plain = /^[A-Za-z_./][A-Za-z0-9_./@=:+ -]*$/;
const reserved = /^(true|false|yes|no|on|off|y|n|null|~)$/i;

function scalar(s, indent) {
  if (typeof s !== 'string') return JSON.stringify(s);
  if (s.includes('\n') && !/^[ \t]/.test(s) && !s.endsWith('\n\n') && !s.includes('\r') && !/[ \t]\n/.test(s)) {
    const chomp = s.endsWith('\n') ? '' : '-';
    const body = (chomp ? s : s.slice(0, -1)).split('\n').map((l) => (l ? indent + l : '')).join('\n');
    return `|${chomp}\n${body}`;
  }
  if (plain.test(s) && !reserved.test(s) && !s.endsWith(' ') && !s.endsWith(':') && !s.includes(': ')) return s;
  return JSON.stringify(s);
}

function key(k) {
  return plain.test(k) && !reserved.test(k) && !k.endsWith(' ') && !k.includes(':') ? k : JSON.stringify(k);
}

function empty(v) {
  return v === null || typeof v !== 'object' || (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);
}

function write(v, indent, out) {
  const next = indent + '  ';
  if (Array.isArray(v)) {
    for (const item of v) {
      if (empty(item)) out.push(`${indent}- ${Array.isArray(item) ? '[]' : item && typeof item === 'object' ? '{}' : scalar(item, next)}`);
      else {
        const sub = [];
        write(item, next, sub);
        out.push(indent + '- ' + sub[0].slice(next.length), ...sub.slice(1));
      }
    }
    return;
  }
  for (const [k, item] of Object.entries(v)) {
    if (empty(item)) out.push(`${indent}${key(k)}: ${Array.isArray(item) ? '[]' : item && typeof item === 'object' ? '{}' : scalar(item, next)}`);
    else {
      out.push(`${indent}${key(k)}:`);
      write(item, Array.isArray(item) ? indent : next, out);
    }
  }
}

export function toYAML(value) {
  if (empty(value)) return (Array.isArray(value) ? '[]' : value && typeof value === 'object' ? '{}' : scalar(value, '  ')) + '\n';
  const out = [];
  write(value, '', out);
  return out.join('\n') + '\n';
}
