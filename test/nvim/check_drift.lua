-- Headless Neovim against `toolpin lsp --stdio` in a workspace whose MCP server has drifted:
-- waits for the TP400 diagnostic, asks for the hover on the pin and the code actions for the
-- diagnostic, and writes all of it as JSON to $TOOLPIN_NVIM_OUT.
local out_path = os.getenv('TOOLPIN_NVIM_OUT')
local cli = os.getenv('TOOLPIN_CLI')
local file = os.getenv('TOOLPIN_FILE')
local root = os.getenv('TOOLPIN_ROOT')
local result = { ok = false }

local function finish()
  local handle = io.open(out_path, 'w')
  handle:write(vim.fn.json_encode(result))
  handle:close()
  vim.cmd('qall!')
end

local client_id = vim.lsp.start_client({ name = 'toolpin', cmd = { 'node', cli, 'lsp', '--stdio' }, root_dir = root })
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buffer = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buffer, client_id)

local function drift()
  for _, diagnostic in ipairs(vim.diagnostic.get(buffer)) do
    if diagnostic.code == 'TP400' then return diagnostic end
  end
  return nil
end

result.ok = vim.wait(20000, function() return drift() ~= nil end, 50)
local diagnostic = drift()
if not diagnostic then
  result.diagnostics = vim.diagnostic.get(buffer)
  finish()
end
result.message = diagnostic.message
result.lnum = diagnostic.lnum
result.col = diagnostic.col

local position = { line = diagnostic.lnum, character = diagnostic.col + 2 }
local hover = vim.lsp.buf_request_sync(buffer, 'textDocument/hover', { textDocument = vim.lsp.util.make_text_document_params(), position = position }, 10000)
for _, response in pairs(hover or {}) do
  if response.result and response.result.contents then result.hover = response.result.contents.value end
end

-- Neovim 0.7 keeps only the extra LSP fields (code, data) in user_data.lsp: rebuild the
-- diagnostic the server published, as the client's own code-action request does.
local extra = diagnostic.user_data and diagnostic.user_data.lsp or {}
local lsp_diagnostic = {
  range = { start = { line = diagnostic.lnum, character = diagnostic.col }, ['end'] = { line = diagnostic.end_lnum, character = diagnostic.end_col } },
  severity = diagnostic.severity,
  message = diagnostic.message,
  source = diagnostic.source,
  code = extra.code,
  data = extra.data,
}
local params = {
  textDocument = vim.lsp.util.make_text_document_params(),
  range = { start = position, ['end'] = position },
  context = { diagnostics = { lsp_diagnostic } },
}
local actions = vim.lsp.buf_request_sync(buffer, 'textDocument/codeAction', params, 10000)
result.actions = {}
for _, response in pairs(actions or {}) do
  for _, action in ipairs(response.result or {}) do table.insert(result.actions, action.title) end
end
vim.lsp.stop_client(client_id)
finish()
