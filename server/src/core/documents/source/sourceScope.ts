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

/** True when a binding pattern (`x`, `{ a: x }`, `[x = 1]`, `...x`, a TS parameter property) binds `name`. */
export function patternBinds(pattern: unknown, name: string): boolean {
  if (!isNode(pattern)) return false;
  switch (pattern.type) {
    case 'Identifier':
      return field(pattern, 'name') === name;
    case 'ObjectPattern':
      return nodes(field(pattern, 'properties')).some((property) => patternBinds(property.type === 'RestElement' ? field(property, 'argument') : field(property, 'value'), name));
    case 'ArrayPattern':
      return nodes(field(pattern, 'elements')).some((element) => patternBinds(element, name));
    case 'AssignmentPattern':
      return patternBinds(field(pattern, 'left'), name);
    case 'RestElement':
      return patternBinds(field(pattern, 'argument'), name);
    case 'TSParameterProperty':
      return patternBinds(field(pattern, 'parameter'), name);
    default:
      return false;
  }
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod']);
const BLOCKS = new Set(['BlockStatement', 'StaticBlock']);

/** True when a statement declares `name` in the block that holds it (`var` included: it is in scope there too). */
function statementDeclares(statement: AnyNode, name: string): boolean {
  const declaration = statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration' ? field(statement, 'declaration') : statement;
  if (!isNode(declaration)) return false;
  if (declaration.type === 'VariableDeclaration') return nodes(field(declaration, 'declarations')).some((declarator) => patternBinds(field(declarator, 'id'), name));
  if (declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration' || declaration.type === 'TSEnumDeclaration') return patternBinds(field(declaration, 'id'), name);
  return false;
}

/** True when a function body declares `name` with `var` anywhere outside nested functions (hoisting). */
function hoistsVar(body: unknown, name: string): boolean {
  const stack = nodes(body);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (FUNCTIONS.has(node.type) || node.type === 'ClassDeclaration' || node.type === 'ClassExpression') continue;
    if (node.type === 'VariableDeclaration' && field(node, 'kind') === 'var' && statementDeclares(node, name)) return true;
    // Only statements can hold a `var`: expressions are not entered.
    if (/Statement$|Declaration$|Clause$|SwitchCase|Block$/.test(node.type)) {
      for (const key of ['body', 'consequent', 'alternate', 'block', 'handler', 'finalizer', 'cases', 'init', 'left', 'declaration']) stack.push(...nodes(field(node, key)));
    }
  }
  return false;
}

/** True when `node`, enclosing a use of `name`, declares it. */
function declares(node: AnyNode, name: string): boolean {
  if (FUNCTIONS.has(node.type)) {
    if (nodes(field(node, 'params')).some((param) => patternBinds(param, name))) return true;
    if (node.type === 'FunctionExpression' && patternBinds(field(node, 'id'), name)) return true;
    const body = field(node, 'body');
    return isNode(body) && body.type === 'BlockStatement' && hoistsVar(field(body, 'body'), name);
  }
  if (node.type === 'ClassExpression' || node.type === 'ClassDeclaration') return patternBinds(field(node, 'id'), name);
  if (BLOCKS.has(node.type)) return nodes(field(node, 'body')).some((statement) => statementDeclares(statement, name));
  if (node.type === 'SwitchStatement') return nodes(field(node, 'cases')).some((entry) => nodes(field(entry, 'consequent')).some((statement) => statementDeclares(statement, name)));
  if (node.type === 'ForStatement') return nodes(field(node, 'init')).some((init) => statementDeclares(init, name));
  if (node.type === 'ForInStatement' || node.type === 'ForOfStatement') return nodes(field(node, 'left')).some((left) => statementDeclares(left, name));
  if (node.type === 'CatchClause') return patternBinds(field(node, 'param'), name);
  return false;
}

/** True when one of `ancestors` (outermost first, as a walk collects them) declares `name`. */
export function isShadowed(name: string, ancestors: readonly AnyNode[]): boolean {
  for (let index = ancestors.length - 1; index >= 0; index--) if (declares(ancestors[index]!, name)) return true;
  return false;
}
