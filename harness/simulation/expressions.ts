import { equal, order, typed, type AttributeMap, type AttributeValue } from './attribute-values';

/**
 * The expressions of DynamoDB's requests, as far as the store writes them (lib/dynamodb/): a
 * recursive-descent parser over tokens, and their evaluation on an item.
 *
 * - Conditions: `a = :v`, `<>`, `<`, `<=`, `>`, `>=`; `attribute_exists(a)`,
 *   `attribute_not_exists(a)`; `AND`, `OR`, `NOT` (NOT binds tightest, then AND, then OR) and
 *   parentheses.
 * - Updates: `SET a = :v, b = b + :w, c = c - :w` and `REMOVE a, b`, each section once.
 * - Projections: `a, #b`.
 * - A key condition: `pk = :pk`.
 *
 * Paths are top-level attribute names, plain or `#name`; values are `:value`. Anything else
 * (`BETWEEN`, `IN`, `begins_with`, `size`, `if_not_exists`, `a.b`, `a[0]`…) throws Unsupported:
 * a form the simulator does not know is a bug to fix here, never an answer made up. What
 * DynamoDB itself refuses, and the simulator knows it does (a `#name` or `:value` not given, or
 * given and not used; an operand of the wrong type), throws Invalid: a ValidationException.
 */

/** A request the simulator does not model: a bug in the simulator (or a new form in the store), never an answer. */
export class Unsupported extends Error {
  override readonly name = 'Unsupported';
}

/** A request DynamoDB refuses as invalid: ValidationException (in a transaction, at an item: ValidationError). */
export class Invalid extends Error {
  override readonly name = 'Invalid';
}

/** The `#names` and `:values` of one request, shared by its expressions, and which of them they used. */
export class Substitutions {
  readonly #names: Readonly<Record<string, string>>;
  readonly #values: AttributeMap;
  readonly #usedNames = new Set<string>();
  readonly #usedValues = new Set<string>();

  constructor(names: Readonly<Record<string, string>> | undefined, values: AttributeMap | undefined) {
    // DynamoDB refuses an empty map as it refuses an unused entry.
    if (names !== undefined && Object.keys(names).length === 0)
      throw new Invalid('ExpressionAttributeNames must not be empty');
    if (values !== undefined && Object.keys(values).length === 0)
      throw new Invalid('ExpressionAttributeValues must not be empty');
    this.#names = names ?? {};
    this.#values = values ?? {};
  }

  name(placeholder: string): string {
    const name = this.#names[placeholder];
    if (name === undefined)
      throw new Invalid(
        `An expression attribute name used in the document path is not defined; attribute name: ${placeholder}`,
      );
    this.#usedNames.add(placeholder);
    return name;
  }

  value(placeholder: string): AttributeValue {
    const value = this.#values[placeholder];
    if (value === undefined)
      throw new Invalid(
        `An expression attribute value used in expression is not defined; attribute value: ${placeholder}`,
      );
    this.#usedValues.add(placeholder);
    return value;
  }

  /** Once every expression of the request is parsed: DynamoDB refuses names and values no expression used. */
  checkAllUsed(): void {
    const unusedNames = Object.keys(this.#names).filter((name) => !this.#usedNames.has(name));
    if (unusedNames.length > 0)
      throw new Invalid(
        `Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(', ')}}`,
      );
    const unusedValues = Object.keys(this.#values).filter((value) => !this.#usedValues.has(value));
    if (unusedValues.length > 0)
      throw new Invalid(
        `Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(', ')}}`,
      );
  }
}

// ---- What the parser builds ----------------------------------------------------------------

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** An attribute of the item, by name, or a value given in the request. */
export type Operand = { readonly path: string } | { readonly value: AttributeValue };

export type Condition =
  | { readonly kind: 'compare'; readonly comparator: Comparator; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'exists'; readonly path: string; readonly exists: boolean }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly condition: Condition };

/** What a SET action writes: an operand, or the sum or difference of two. */
export type SetValue = Operand | { readonly arithmetic: '+' | '-'; readonly left: Operand; readonly right: Operand };

export interface Update {
  readonly set: readonly { readonly path: string; readonly value: SetValue }[];
  readonly remove: readonly string[];
}

// ---- Tokens --------------------------------------------------------------------------------

interface Token {
  readonly kind: 'word' | 'name' | 'value' | 'symbol' | 'end';
  readonly text: string;
}

const SYMBOLS = ['<>', '<=', '>=', '=', '<', '>', '(', ')', ',', '+', '-'];

function tokens(expression: string): Token[] {
  const found: Token[] = [];
  let at = 0;
  while (at < expression.length) {
    const rest = expression.slice(at);
    const space = /^\s+/.exec(rest);
    if (space) {
      at += space[0].length;
      continue;
    }
    const word = /^([#:]?)[A-Za-z0-9_]+/.exec(rest);
    if (word) {
      const kind = word[1] === '#' ? 'name' : word[1] === ':' ? 'value' : 'word';
      found.push({ kind, text: word[0] });
      at += word[0].length;
      continue;
    }
    const symbol = SYMBOLS.find((candidate) => rest.startsWith(candidate));
    if (symbol === undefined) throw new Unsupported(`unsupported expression syntax at "${rest}" in "${expression}"`);
    found.push({ kind: 'symbol', text: symbol });
    at += symbol.length;
  }
  found.push({ kind: 'end', text: '' });
  return found;
}

/** Words that are syntax, not attribute names (DynamoDB's keywords are case-insensitive). */
const KEYWORDS = ['AND', 'OR', 'NOT', 'SET', 'REMOVE', 'ADD', 'DELETE', 'BETWEEN', 'IN'];
const COMPARATORS: readonly string[] = ['=', '<>', '<', '<=', '>', '>='];

// ---- The parser ----------------------------------------------------------------------------

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(
    readonly expression: string,
    readonly substitutions: Substitutions,
  ) {
    this.#tokens = tokens(expression);
  }

  peek(): Token {
    return this.#tokens[this.#at] ?? { kind: 'end', text: '' };
  }

  next(): Token {
    const token = this.peek();
    this.#at++;
    return token;
  }

  /** True, and past it, if the next token is `keyword` (a word, any case) or the symbol `keyword`. */
  accept(keyword: string): boolean {
    const token = this.peek();
    const matches = token.kind === 'word' ? token.text.toUpperCase() === keyword : token.text === keyword;
    if (matches && token.kind !== 'end') this.#at++;
    return matches && token.kind !== 'end';
  }

  expect(keyword: string): void {
    if (!this.accept(keyword)) this.unsupported(`expected "${keyword}"`);
  }

  expectEnd(): void {
    if (this.peek().kind !== 'end') this.unsupported('expected the end of the expression');
  }

  unsupported(why: string): never {
    const token = this.peek();
    throw new Unsupported(`${why} at "${token.text || '(end)'}" in "${this.expression}"`);
  }

  /** A top-level attribute name: plain, or a `#name` substituted. */
  path(): string {
    const token = this.peek();
    if (token.kind === 'name') {
      this.next();
      return this.#noDocumentPath(this.substitutions.name(token.text));
    }
    if (token.kind === 'word' && !KEYWORDS.includes(token.text.toUpperCase()) && /^[A-Za-z]/.test(token.text)) {
      this.next();
      return this.#noDocumentPath(token.text);
    }
    return this.unsupported('expected an attribute name');
  }

  #noDocumentPath(name: string): string {
    const token = this.peek();
    if (token.kind === 'symbol' && token.text === '(') this.unsupported(`unsupported function ${name}`);
    return name;
  }

  operand(): Operand {
    const token = this.peek();
    if (token.kind === 'value') {
      this.next();
      return { value: this.substitutions.value(token.text) };
    }
    return { path: this.path() };
  }

  // condition := or
  // or        := and (OR and)*
  // and       := not (AND not)*
  // not       := NOT not | primary
  // primary   := '(' or ')' | attribute_exists '(' path ')' | attribute_not_exists '(' path ')'
  //            | operand comparator operand
  condition(): Condition {
    let left = this.#and();
    while (this.accept('OR')) left = { kind: 'or', left, right: this.#and() };
    return left;
  }

  #and(): Condition {
    let left = this.#not();
    while (this.accept('AND')) left = { kind: 'and', left, right: this.#not() };
    return left;
  }

  #not(): Condition {
    if (this.accept('NOT')) return { kind: 'not', condition: this.#not() };
    return this.#primary();
  }

  #primary(): Condition {
    if (this.accept('(')) {
      const inner = this.condition();
      this.expect(')');
      return inner;
    }
    const token = this.peek();
    if (token.kind === 'word' && (token.text === 'attribute_exists' || token.text === 'attribute_not_exists')) {
      this.next();
      this.expect('(');
      const path = this.path();
      this.expect(')');
      return { kind: 'exists', path, exists: token.text === 'attribute_exists' };
    }
    const left = this.operand();
    const comparator = this.next();
    if (comparator.kind !== 'symbol' || !COMPARATORS.includes(comparator.text))
      this.unsupported(`expected a comparison after "${JSON.stringify(left)}"`);
    return { kind: 'compare', comparator: comparator.text as Comparator, left, right: this.operand() };
  }

  // update  := section+
  // section := SET action (',' action)* | REMOVE path (',' path)*
  // action  := path '=' operand (('+' | '-') operand)?
  update(): Update {
    const set: { path: string; value: SetValue }[] = [];
    const remove: string[] = [];
    const seen = new Set<string>();
    while (this.peek().kind !== 'end') {
      const section = this.peek().text.toUpperCase();
      if (section !== 'SET' && section !== 'REMOVE') this.unsupported('expected SET or REMOVE');
      if (seen.has(section))
        throw new Invalid(`The "${section}" section can only be used once in an update expression`);
      seen.add(section);
      this.next();
      do {
        if (section === 'REMOVE') remove.push(this.path());
        else set.push(this.#setAction());
      } while (this.accept(','));
    }
    if (seen.size === 0) this.unsupported('expected SET or REMOVE');
    const paths = [...set.map(({ path }) => path), ...remove];
    if (new Set(paths).size !== paths.length) throw new Invalid('Two document paths overlap with each other');
    return { set, remove };
  }

  #setAction(): { path: string; value: SetValue } {
    const path = this.path();
    this.expect('=');
    const left = this.operand();
    for (const arithmetic of ['+', '-'] as const) {
      if (this.accept(arithmetic)) return { path, value: { arithmetic, left, right: this.operand() } };
    }
    return { path, value: left };
  }

  // projection := path (',' path)*
  projection(): string[] {
    const paths = [this.path()];
    while (this.accept(',')) paths.push(this.path());
    return paths;
  }
}

function parsed<T>(expression: string, substitutions: Substitutions, parse: (parser: Parser) => T): T {
  const parser = new Parser(expression, substitutions);
  const result = parse(parser);
  parser.expectEnd();
  return result;
}

export function parseCondition(expression: string, substitutions: Substitutions): Condition {
  return parsed(expression, substitutions, (parser) => parser.condition());
}

export function parseUpdate(expression: string, substitutions: Substitutions): Update {
  return parsed(expression, substitutions, (parser) => parser.update());
}

export function parseProjection(expression: string, substitutions: Substitutions): string[] {
  return parsed(expression, substitutions, (parser) => parser.projection());
}

/** A Query's key condition, as the store writes it: the partition key equal to a value (no sort key condition). */
export function parseKeyCondition(
  expression: string,
  substitutions: Substitutions,
): { readonly path: string; readonly value: AttributeValue } {
  const condition = parseCondition(expression, substitutions);
  if (
    condition.kind === 'compare' &&
    condition.comparator === '=' &&
    'path' in condition.left &&
    'value' in condition.right
  )
    return { path: condition.left.path, value: condition.right.value };
  throw new Unsupported(`unsupported key condition "${expression}": only "partitionKey = :value"`);
}

// ---- Evaluation ----------------------------------------------------------------------------

function valueOf(operand: Operand, item: AttributeMap | undefined): AttributeValue | undefined {
  return 'value' in operand ? operand.value : item?.[operand.path];
}

/**
 * Whether `condition` holds for `item` (undefined: no item, so no attribute exists). A comparison
 * with an attribute the item lacks is false, except `<>`, which is true: the values differ.
 */
export function holds(condition: Condition, item: AttributeMap | undefined): boolean {
  switch (condition.kind) {
    case 'and':
      return holds(condition.left, item) && holds(condition.right, item);
    case 'or':
      return holds(condition.left, item) || holds(condition.right, item);
    case 'not':
      return !holds(condition.condition, item);
    case 'exists':
      return (item?.[condition.path] !== undefined) === condition.exists;
    case 'compare':
      return compares(condition.comparator, valueOf(condition.left, item), valueOf(condition.right, item));
  }
}

function compares(comparator: Comparator, left: AttributeValue | undefined, right: AttributeValue | undefined) {
  if (left === undefined || right === undefined) return comparator === '<>';
  if (comparator === '=') return equal(left, right);
  if (comparator === '<>') return !equal(left, right);
  const sign = order(left, right);
  if (sign === undefined) return false;
  switch (comparator) {
    case '<':
      return sign < 0;
    case '<=':
      return sign <= 0;
    case '>':
      return sign > 0;
    case '>=':
      return sign >= 0;
  }
}

/**
 * The item after `update`: `item`, or the key alone when there was none (UpdateItem creates the
 * item). Throws Invalid as DynamoDB refuses: an attribute the item lacks used as a value, or
 * arithmetic on something other than numbers.
 */
export function applyUpdate(update: Update, item: AttributeMap | undefined, key: AttributeMap): AttributeMap {
  const before = item ?? key;
  const after: Record<string, AttributeValue> = { ...before };
  // Every operand reads the item as it was before the update, as in DynamoDB.
  for (const { path, value } of update.set) after[path] = setValue(value, before);
  for (const path of update.remove) Reflect.deleteProperty(after, path);
  return after;
}

function setValue(value: SetValue, item: AttributeMap): AttributeValue {
  if (!('arithmetic' in value)) return present(value, item);
  const left = typed(present(value.left, item));
  const right = typed(present(value.right, item));
  if (left.type !== 'N' || right.type !== 'N')
    throw new Invalid('An operand in the update expression has an incorrect data type');
  // Numbers as JavaScript adds them: exact for the integers the store counts with.
  const sum = Number(left.inner) + (value.arithmetic === '+' ? 1 : -1) * Number(right.inner);
  return { N: String(sum) };
}

function present(operand: Operand, item: AttributeMap): AttributeValue {
  const value = valueOf(operand, item);
  if (value === undefined)
    throw new Invalid('The provided expression refers to an attribute that does not exist in the item');
  return value;
}

/** The attributes of `item` that `paths` name, those it has. */
export function project(item: AttributeMap, paths: readonly string[] | undefined): AttributeMap {
  if (paths === undefined) return item;
  return Object.fromEntries(paths.flatMap((path) => (item[path] === undefined ? [] : [[path, item[path]]])));
}
