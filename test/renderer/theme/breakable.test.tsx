import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Breakable } from '../../../renderer/src/components/Breakable.js';

describe('Breakable', () => {
  it('offers line breaks only at an identifier’s joints, and reads as the whole text', () => {
    const { container } = render(
      <strong>
        <Breakable text="ada.lovelace@analytical-engines.example" />
      </strong>,
    );
    expect(container.textContent).toBe('ada.lovelace@analytical-engines.example');
    expect(container.querySelector('strong')!.innerHTML).toBe(
      'ada.<wbr>lovelace<wbr>@analytical-<wbr>engines.<wbr>example',
    );
  });

  it('breaks after an underscore, and leaves a word without joints whole', () => {
    const { container } = render(<Breakable text="sk_svc" />);
    expect(container.innerHTML).toBe('sk_<wbr>svc');
    expect(render(<Breakable text="admin" />).container.innerHTML).toBe('admin');
  });
});
