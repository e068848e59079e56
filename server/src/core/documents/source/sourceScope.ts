/**
 * Scopes, as far as the source reader needs them: whether a name used at a place is still the
 * module-level binding (an import of a pin function, a constant) or a local binding that shadows
 * it. A minified bundle renames `defineConnector` to `e` and has many parameters named `e`: a call
 * `e(…)` inside such a function is not the pin function.
 *
 * Contract: {@link isShadowed} looks at the nodes enclosing the use, innermost first, and answers
 * true when any of them declares the name: a function's parameters, its own name (a function or
 * class expression), its hoisted `var`s and function declarations; a block's, a `switch`'s or a
 * static block's `let`, `const`, `var`, `class` and `function` declarations; a `for` head's
 * declarations; a `catch` parameter. The module's own top level is not looked at: that is where
 * the binding being resolved lives.
 */

/** Any node, as far as this file needs to know it. */
interface AnyNode {
  readonly type: string;
}

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && 'type' in value && typeof value.type === 'string';
}

function field(node: AnyNode, key: string): unknown {
  return Reflect.get(node, key);
}

function nodes(value: unknown): AnyNode[] {
  if (Array.isArray(value)) return value.filter(isNode);
  return isNode(value) ? [value] : [];
}

/** Adds every name a binding pattern (`x`, `{ a: x }`, `[x = 1]`, `...x`, a TS parameter property) binds. */
function addPatternNames(pattern: unknown, into: Set<string>): void {
  if (!isNode(pattern)) return;
  switch (pattern.type) {
    case 'Identifier': {
      const name = field(pattern, 'name');
      if (typeof name === 'string') into.add(name);
      return;
    }
    case 'ObjectPattern':
      for (const property of nodes(field(pattern, 'properties'))) addPatternNames(property.type === 'RestElement' ? field(property, 'argument') : field(property, 'value'), into);
      return;
    case 'ArrayPattern':
      for (const element of nodes(field(pattern, 'elements'))) addPatternNames(element, into);
      return;
    case 'AssignmentPattern':
      return addPatternNames(field(pattern, 'left'), into);
    case 'RestElement':
      return addPatternNames(field(pattern, 'argument'), into);
    case 'TSParameterProperty':
      return addPatternNames(field(pattern, 'parameter'), into);
    default:
      return;
  }
}

/** True when a binding pattern binds `name`. */
export function patternBinds(pattern: unknown, name: string): boolean {
  const names = new Set<string>();
  addPatternNames(pattern, names);
  return names.has(name);
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod']);
const BLOCKS = new Set(['BlockStatement', 'StaticBlock']);

/** Adds the names a statement declares in the block that holds it (`var` included: it is in scope there too). */
function addStatementNames(statement: AnyNode, into: Set<string>): void {
  const declaration = statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration' ? field(statement, 'declaration') : statement;
  if (!isNode(declaration)) return;
  if (declaration.type === 'VariableDeclaration') for (const declarator of nodes(field(declaration, 'declarations'))) addPatternNames(field(declarator, 'id'), into);
  else if (declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration' || declaration.type === 'TSEnumDeclaration') addPatternNames(field(declaration, 'id'), into);
}

const STATEMENT_TYPE = /Statement$|Declaration$|Clause$|SwitchCase|Block$/;
const STATEMENT_KEYS = ['body', 'consequent', 'alternate', 'block', 'handler', 'finalizer', 'cases', 'init', 'left', 'declaration'];

/** Adds the names a function body declares with `var` anywhere outside nested functions (hoisting). */
function addHoistedVarNames(body: unknown, into: Set<string>): void {
  const stack = nodes(body);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (FUNCTIONS.has(node.type) || node.type === 'ClassDeclaration' || node.type === 'ClassExpression') continue;
    if (node.type === 'VariableDeclaration' && field(node, 'kind') === 'var') addStatementNames(node, into);
    // Only statements can hold a `var`: expressions are not entered.
    if (STATEMENT_TYPE.test(node.type)) {
      for (const key of STATEMENT_KEYS) for (const child of nodes(field(node, key))) stack.push(child);
    }
  }
}

/** The names a node, enclosing a use, declares (see the contract at the top). */
function namesDeclaredBy(node: AnyNode): ReadonlySet<string> {
  const names = new Set<string>();
  if (FUNCTIONS.has(node.type)) {
    for (const param of nodes(field(node, 'params'))) addPatternNames(param, names);
    if (node.type === 'FunctionExpression') addPatternNames(field(node, 'id'), names);
    const body = field(node, 'body');
    if (isNode(body) && body.type === 'BlockStatement') addHoistedVarNames(field(body, 'body'), names);
  } else if (node.type === 'ClassExpression' || node.type === 'ClassDeclaration') {
    addPatternNames(field(node, 'id'), names);
  } else if (BLOCKS.has(node.type)) {
    for (const statement of nodes(field(node, 'body'))) addStatementNames(statement, names);
  } else if (node.type === 'SwitchStatement') {
    for (const entry of nodes(field(node, 'cases'))) for (const statement of nodes(field(entry, 'consequent'))) addStatementNames(statement, names);
  } else if (node.type === 'ForStatement') {
    for (const init of nodes(field(node, 'init'))) addStatementNames(init, names);
  } else if (node.type === 'ForInStatement' || node.type === 'ForOfStatement') {
    for (const left of nodes(field(node, 'left'))) addStatementNames(left, names);
  } else if (node.type === 'CatchClause') {
    addPatternNames(field(node, 'param'), names);
  }
  return names;
}

/**
 * The names each scope node declares, collected once per node: a minified bundle makes thousands
 * of calls inside one function, and looking through its body again for each call (its hoisted
 * `var`s above all) cost time in proportion to calls × body size, 5× a bare parse of the bundle.
 * Kept by node, weakly: a tree that is let go takes its entries with it.
 */
const declaredNames = new WeakMap<AnyNode, ReadonlySet<string>>();

/** The node types that can declare a name for the code inside them. */
const SCOPES = new Set([...FUNCTIONS, ...BLOCKS, 'ClassExpression', 'ClassDeclaration', 'SwitchStatement', 'ForStatement', 'ForInStatement', 'ForOfStatement', 'CatchClause']);

function declares(node: AnyNode, name: string): boolean {
  if (!SCOPES.has(node.type)) return false;
  let names = declaredNames.get(node);
  if (!names) declaredNames.set(node, (names = namesDeclaredBy(node)));
  return names.has(name);
}

/** True when one of `ancestors` (outermost first, as a walk collects them) declares `name`. */
export function isShadowed(name: string, ancestors: readonly AnyNode[]): boolean {
  for (let index = ancestors.length - 1; index >= 0; index--) if (declares(ancestors[index]!, name)) return true;
  return false;
}
