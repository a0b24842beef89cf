// A terminal for the web terminal's shell: a screen of rows × cols cells
// that interprets what a shell and its programs print (text, control
// characters, the VT100/xterm escape sequences for cursor moves, erasing,
// scrolling regions, colours and the alternate screen) and turns keys into
// what a terminal sends. Programs such as top or vi work in it.

const palette = ['#000000', '#cd3131', '#0dbc79', '#e5e510', '#2472c8', '#bc3fbc', '#11a8cd', '#e5e5e5',
  '#666666', '#f14c4c', '#23d18b', '#f5f543', '#3b8eea', '#d670d6', '#29b8db', '#ffffff'];

// keys are what a key sends that is not its character.
const keys = { Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b', ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C',
  ArrowLeft: '\x1b[D', Home: '\x1b[H', End: '\x1b[F', Delete: '\x1b[3~', PageUp: '\x1b[5~', PageDown: '\x1b[6~', Insert: '\x1b[2~' };

// colour is the CSS colour of an SGR colour number (0–255).
function colour(n) {
  if (n < 16) return palette[n];
  if (n < 232) {
    const c = n - 16, v = (x) => (x ? 55 + x * 40 : 0);
    return `rgb(${v(Math.floor(c / 36))},${v(Math.floor(c / 6) % 6)},${v(c % 6)})`;
  }
  const g = 8 + (n - 232) * 10;
  return `rgb(${g},${g},${g})`;
}

export class Terminal {
  // element is where the screen is drawn; send gets what keys type.
  constructor(element, send, rows = 24, cols = 100) {
    this.el = element;
    this.send = send;
    this.rows = rows;
    this.cols = cols;
    this.style = {};
    this.main = this.blank(rows);
    this.alt = null;
    this.screen = this.main;
    this.x = 0;
    this.y = 0;
    this.top = 0;
    this.bottom = rows - 1;
    this.pending = '';
    this.cursorShown = true;
    element.tabIndex = 0;
    element.setAttribute('role', 'textbox');
    element.addEventListener('keydown', (e) => this.key(e));
    element.addEventListener('paste', (e) => { e.preventDefault(); this.send(e.clipboardData.getData('text')); });
    this.draw();
  }

  blank(n) {
    return Array.from({ length: n }, () => this.line());
  }

  line() {
    return Array.from({ length: this.cols }, () => ({ ch: ' ', s: {} }));
  }

  // key sends what the key types: its character, a control character
  // with Ctrl, or its escape sequence.
  key(e) {
    let data = keys[e.key];
    if (e.ctrlKey && e.key.length === 1) {
      const c = e.key.toUpperCase().charCodeAt(0);
      if (c >= 64 && c <= 95) data = String.fromCharCode(c - 64);
    } else if (!data && e.key.length === 1 && !e.metaKey) {
      data = (e.altKey ? '\x1b' : '') + e.key;
    }
    if (data === undefined) return;
    e.preventDefault();
    this.send(data);
  }

  // write interprets output of the shell.
  write(text) {
    const s = this.pending + text;
    this.pending = '';
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === '\x1b') {
        const end = this.escape(s, i);
        if (end < 0) { this.pending = s.slice(i); break; } // an unfinished sequence: wait for the rest
        i = end;
      } else if (c === '\r') this.x = 0;
      else if (c === '\n' || c === '\v' || c === '\f') this.lineFeed();
      else if (c === '\b') this.x = Math.max(0, this.x - 1);
      else if (c === '\t') this.x = Math.min(this.cols - 1, (Math.floor(this.x / 8) + 1) * 8);
      else if (c === '\x07' || c < ' ') continue;
      else this.put(c);
    }
    this.draw();
  }

  put(c) {
    if (this.x >= this.cols) { this.x = 0; this.lineFeed(); }
    this.screen[this.y][this.x] = { ch: c, s: this.style };
    this.x++;
  }

  lineFeed() {
    if (this.y === this.bottom) this.scroll(1);
    else this.y = Math.min(this.rows - 1, this.y + 1);
  }

  // scroll moves the scrolling region's lines up by n (down when n < 0).
  scroll(n) {
    for (let k = 0; k < Math.abs(n); k++) {
      if (n > 0) { this.screen.splice(this.top, 1); this.screen.splice(this.bottom, 0, this.line()); }
      else { this.screen.splice(this.bottom, 1); this.screen.splice(this.top, 0, this.line()); }
    }
  }

  // escape interprets the sequence at s[i] (ESC) and returns the index of
  // its last character, -1 when it is not complete yet.
  escape(s, i) {
    const next = s[i + 1];
    if (next === undefined) return -1;
    if (next === '[') {
      const m = /^\[([?>]?)([0-9;]*)([ -/]*)([@-~])/.exec(s.slice(i + 1, i + 64));
      if (!m) return s.length - i > 64 ? i + 1 : -1;
      this.csi(m[1], m[2] ? m[2].split(';').map((v) => (v === '' ? undefined : Number(v))) : [], m[4]);
      return i + m[0].length;
    }
    if (next === ']') { // operating system command (a window title): skipped
      const end = s.slice(i).search(/\x07|\x1b\\/);
      return end < 0 ? -1 : i + end + (s[i + end] === '\x07' ? 0 : 1);
    }
    if (next === '(' || next === ')') return s.length > i + 2 ? i + 2 : -1; // character sets
    if (next === 'M') { if (this.y === this.top) this.scroll(-1); else this.y = Math.max(0, this.y - 1); }
    else if (next === 'D') this.lineFeed();
    else if (next === 'E') { this.x = 0; this.lineFeed(); }
    else if (next === '7') this.saved = { x: this.x, y: this.y, style: this.style };
    else if (next === '8' && this.saved) Object.assign(this, { x: this.saved.x, y: this.saved.y, style: this.saved.style });
    else if (next === 'c') this.reset();
    return i + 1;
  }

  reset() {
    this.screen = this.main = this.blank(this.rows);
    this.alt = null;
    Object.assign(this, { x: 0, y: 0, top: 0, bottom: this.rows - 1, style: {} });
  }

  csi(prefix, p, f) {
    const n = (k, d = 1) => (p[k] === undefined || p[k] === 0 ? d : p[k]);
    const clamp = () => { this.x = Math.max(0, Math.min(this.cols - 1, this.x)); this.y = Math.max(0, Math.min(this.rows - 1, this.y)); };
    if (prefix === '?') return this.mode(p, f === 'h');
    switch (f) {
      case 'A': this.y -= n(0); break;
      case 'B': case 'e': this.y += n(0); break;
      case 'C': case 'a': this.x += n(0); break;
      case 'D': this.x -= n(0); break;
      case 'E': this.y += n(0); this.x = 0; break;
      case 'F': this.y -= n(0); this.x = 0; break;
      case 'G': case '`': this.x = n(0) - 1; break;
      case 'd': this.y = n(0) - 1; break;
      case 'H': case 'f': this.y = n(0) - 1; this.x = n(1) - 1; break;
      case 'J': this.erase(p[0] || 0, true); break;
      case 'K': this.erase(p[0] || 0, false); break;
      case 'L': case 'M': { // insert or delete lines in the region
        const { top } = this;
        this.top = this.y;
        this.scroll(f === 'L' ? -n(0) : n(0));
        this.top = top;
        break;
      }
      case 'P': this.screen[this.y].splice(this.x, n(0)); while (this.screen[this.y].length < this.cols) this.screen[this.y].push({ ch: ' ', s: {} }); break;
      case '@': for (let k = 0; k < n(0); k++) { this.screen[this.y].splice(this.x, 0, { ch: ' ', s: {} }); this.screen[this.y].pop(); } break;
      case 'X': for (let k = 0; k < n(0) && this.x + k < this.cols; k++) this.screen[this.y][this.x + k] = { ch: ' ', s: {} }; break;
      case 'S': this.scroll(n(0)); break;
      case 'T': this.scroll(-n(0)); break;
      case 'r': this.top = n(0) - 1; this.bottom = Math.min(this.rows, n(1, this.rows)) - 1; this.x = 0; this.y = this.top; break;
      case 'm': this.sgr(p.length ? p : [0]); break;
      case 'n': if (p[0] === 6) this.send(`\x1b[${this.y + 1};${this.x + 1}R`); break;
      case 'c': if (!prefix) this.send('\x1b[?1;2c'); break;
      default: break;
    }
    clamp();
  }

  // mode sets a private mode: the cursor shown (25), the alternate screen
  // (47, 1047, 1049).
  mode(p, on) {
    for (const m of p) {
      if (m === 25) this.cursorShown = on;
      if (m === 47 || m === 1047 || m === 1049) {
        if (on && !this.alt) {
          this.savedMain = { x: this.x, y: this.y };
          this.alt = this.blank(this.rows);
          this.screen = this.alt;
        } else if (!on && this.alt) {
          this.alt = null;
          this.screen = this.main;
          if (this.savedMain) Object.assign(this, this.savedMain);
        }
      }
    }
  }

  // erase clears the screen (J) or the line (K): 0 from the cursor, 1 up
  // to it, 2 all.
  erase(how, screen) {
    const clear = (row, from, to) => { for (let x = from; x < to; x++) this.screen[row][x] = { ch: ' ', s: {} }; };
    if (how === 0) clear(this.y, this.x, this.cols);
    if (how === 1) clear(this.y, 0, this.x + 1);
    if (how === 2 || how === 3) clear(this.y, 0, this.cols);
    if (!screen) return;
    for (let row = 0; row < this.rows; row++) {
      if ((how === 0 && row > this.y) || (how === 1 && row < this.y) || how >= 2) clear(row, 0, this.cols);
    }
  }

  // sgr sets the style: bold, underline, inverse, 16, 256 and RGB colours.
  sgr(p) {
    const s = { ...this.style };
    for (let k = 0; k < p.length; k++) {
      const v = p[k] || 0;
      if (v === 0) Object.keys(s).forEach((key) => delete s[key]);
      else if (v === 1) s.bold = true;
      else if (v === 4) s.underline = true;
      else if (v === 7) s.inverse = true;
      else if (v === 22) delete s.bold;
      else if (v === 24) delete s.underline;
      else if (v === 27) delete s.inverse;
      else if (v >= 30 && v <= 37) s.fg = palette[v - 30];
      else if (v >= 90 && v <= 97) s.fg = palette[v - 82];
      else if (v >= 40 && v <= 47) s.bg = palette[v - 40];
      else if (v >= 100 && v <= 107) s.bg = palette[v - 92];
      else if (v === 39) delete s.fg;
      else if (v === 49) delete s.bg;
      else if (v === 38 || v === 48) {
        const key = v === 38 ? 'fg' : 'bg';
        if (p[k + 1] === 5) { s[key] = colour(p[k + 2] || 0); k += 2; } else if (p[k + 1] === 2) { s[key] = `rgb(${p[k + 2] || 0},${p[k + 3] || 0},${p[k + 4] || 0})`; k += 4; }
      }
    }
    this.style = s;
  }

  // draw shows the screen: a row each, runs of one style as spans.
  draw() {
    const rows = this.screen.map((cells, y) => {
      const row = document.createElement('div');
      let run = '', style = null;
      const flush = () => {
        if (!run) return;
        const span = document.createElement('span');
        span.textContent = run;
        if (style.fg || style.inverse) span.style.color = style.inverse ? (style.bg || 'var(--term-bg)') : style.fg;
        if (style.bg || style.inverse) span.style.background = style.inverse ? (style.fg || 'var(--term-fg)') : style.bg;
        if (style.bold) span.style.fontWeight = '700';
        if (style.underline) span.style.textDecoration = 'underline';
        if (style.cursor) span.className = 'cursor';
        row.append(span);
        run = '';
      };
      cells.forEach((cell, x) => {
        const s = this.cursorShown && y === this.y && x === this.x ? { ...cell.s, cursor: true } : cell.s;
        if (s !== style && JSON.stringify(s) !== JSON.stringify(style)) { flush(); style = s; }
        run += cell.ch;
      });
      flush();
      return row;
    });
    this.el.replaceChildren(...rows);
  }

  // text is the screen's text, a line a row, trailing spaces cut.
  text() {
    return this.screen.map((cells) => cells.map((c) => c.ch).join('').trimEnd()).join('\n');
  }
}
