;;; observe_eglot.el --- drives eglot in `emacs --batch' for test/emacs/eglot.test.ts -*- lexical-binding: t -*-

;; Loaded after the docs/editors.md eglot block (the user's configuration, loaded verbatim).
;; Opens the file named by $TOOLPIN_FILE as a user would (`find-file', whose mode hook runs
;; `eglot-ensure'), then runs the command loop's `post-command-hook' once, as Emacs does after the
;; command that opened the file: that is where `eglot-ensure' connects. It records every
;; `textDocument/publishDiagnostics' the server sends, waits (for at most $TOOLPIN_WINDOW_MS
;; milliseconds) until the opened file's latest publication holds a diagnostic whose message
;; contains $TOOLPIN_STOP_TEXT, asks for the hover at the first diagnostic of code
;; $TOOLPIN_HOVER_CODE, and writes what it saw as JSON to $TOOLPIN_EMACS_OUT.
;;
;; The waits are event-driven: `accept-process-output' returns as soon as the server's output
;; arrives, and the loop ends on the first publication that answers.

(require 'cl-lib)
(require 'json)
(require 'eglot)

(defvar toolpin-observed-publications nil "Every publication, newest first: (MILLISECONDS URI DIAGNOSTICS).")
(defvar toolpin-observe-start (float-time))

(defun toolpin-observe-ms ()
  (round (* 1000 (- (float-time) toolpin-observe-start))))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (push (list (toolpin-observe-ms) uri (append diagnostics nil)) toolpin-observed-publications))

(defun toolpin-observe-latest (uri)
  "The diagnostics of the latest publication for URI, or :none when there was none."
  (let ((publication (cl-find uri toolpin-observed-publications :key #'cadr :test #'equal)))
    (if publication (nth 2 publication) :none)))

(defun toolpin-observe-code (diagnostic)
  (let ((code (plist-get diagnostic :code)))
    (if (numberp code) (number-to-string code) code)))

(let* ((file (getenv "TOOLPIN_FILE"))
       (out (getenv "TOOLPIN_EMACS_OUT"))
       (window-ms (string-to-number (or (getenv "TOOLPIN_WINDOW_MS") "30000")))
       (stop-text (getenv "TOOLPIN_STOP_TEXT"))
       (hover-code (getenv "TOOLPIN_HOVER_CODE"))
       (result (list :publications [] :errors [])))
  (condition-case failure
      (progn
        (find-file file)
        (setq result (plist-put result :mode (symbol-name major-mode)))
        ;; The command loop runs this after every command; in --batch there is no command loop.
        (run-hooks 'post-command-hook)
        (let* ((deadline (+ (float-time) (/ window-ms 1000.0)))
               (server (progn
                         ;; eglot waits `eglot-sync-connect' seconds for the server's answer to
                         ;; initialize, then connects in the background: wait for that too.
                         (while (and (not (eglot-current-server)) (< (float-time) deadline))
                           (accept-process-output nil 0.1))
                         (eglot-current-server)))
               (uri (and server (eglot--path-to-uri file)))
               (arrived nil))
          (setq result (plist-put result :connected (if server t :json-false)))
          (when server
            (setq result (plist-put result :root (expand-file-name (project-root (eglot--project server)))))
            (setq result (plist-put result :server_name (or (plist-get (eglot--server-info server) :name) "")))
            (while (and (not arrived) (< (float-time) deadline))
              (accept-process-output (jsonrpc--process server) (max 0.05 (- deadline (float-time))))
              (let ((latest (toolpin-observe-latest uri)))
                (setq arrived (and (listp latest)
                                   (cl-some (lambda (diagnostic) (string-match-p (regexp-quote stop-text) (plist-get diagnostic :message)))
                                            latest)))))
            (setq result (plist-put result :arrived (if arrived t :json-false)))
            (let* ((latest (toolpin-observe-latest uri))
                   (target (and (listp latest) (cl-find hover-code latest :key #'toolpin-observe-code :test #'equal))))
              (when target
                (let* ((start (plist-get (plist-get target :range) :start))
                       (hover (jsonrpc-request server :textDocument/hover
                                               (list :textDocument (list :uri uri) :position start))))
                  (setq result (plist-put result :hover hover)))))
            (setq result (plist-put result :capabilities_hover_format
                                    (or (plist-get (plist-get (plist-get (eglot-client-capabilities server) :textDocument) :hover) :contentFormat) [])))
            (ignore-errors (eglot-shutdown server)))))
    (error (setq result (plist-put result :errors (vector (error-message-string failure))))))
  (setq result (plist-put result :publications
                          (vconcat (mapcar (lambda (publication)
                                             (list :at_ms (nth 0 publication) :uri (nth 1 publication)
                                                   :diagnostics (vconcat (mapcar (lambda (d) (list :code (toolpin-observe-code d) :message (plist-get d :message) :line (plist-get (plist-get (plist-get d :range) :start) :line)))
                                                                                 (nth 2 publication)))))
                                           (reverse toolpin-observed-publications)))))
  (with-temp-file out
    (let ((json-encoding-pretty-print nil))
      (insert (json-encode result)))))
